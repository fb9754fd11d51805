"""The HTTP API over a real socket: ``python -m clearside serve`` as a subprocess on a free port, on a store of the
test's (SQLite or PostgreSQL), its jobs on bench/latency_server.py (the OpenAI-compatible wire, a fixed pace); a
small client for JSON requests and server-sent events; the store's rows as a snapshot, to show a refused request
changed nothing."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import free_port
from sqlalchemy import func, select

from clearside.store import Store
from clearside.store.tables import ApiToken, Challenge, Debate, DebateVersion, InterventionRow, LiveTurn
from clearside.store.tokens import create_token

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def error(self) -> dict[str, Any]:
        return self.json()["error"]


@dataclass
class Api:
    """A running ``serve`` process, its store and its log."""

    port: int
    url: str
    store: Store
    process: subprocess.Popen
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def token(self, name: str, *, admin: bool = False) -> str:
        """A new token's secret (one per name and server)."""
        if name not in self.tokens:
            self.tokens[name] = create_token(self.store, name, admin=admin)[1]
        return self.tokens[name]

    def request(self, method: str, path: str, body: Any = None, *, token: str | None = None, raw: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 30) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
                **(headers or {})}
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        try:
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                         response.read().decode())
        finally:
            conn.close()

    def events(self, path: str, token: str, *, stop: Any = None, headers: dict[str, str] | None = None,
               timeout: float = 90) -> list[dict[str, str]]:
        """The server-sent events of ``path`` until the stream ends, or until ``stop(event)`` is true: then the
        connection is closed at once, mid-stream (a client going away)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}", **(headers or {})})
        response = conn.getresponse()
        assert response.status == 200, response.read()
        assert response.getheader("content-type", "").startswith("text/event-stream")
        out: list[dict[str, str]] = []
        current: dict[str, str] = {}
        try:
            for raw in response:
                line = raw.decode().rstrip("\n")
                if line.startswith(":"):
                    continue
                if line:
                    name, _, value = line.partition(": ")
                    current[name] = value
                    continue
                if "event" in current:
                    out.append(current)
                    if stop is not None and stop(current):
                        return out
                current = {}
        finally:
            conn.close()
        return out

    def wait(self, path: str, token: str, until: Any = ("done", "failed", "cancelled"),
             timeout: float = 90) -> dict[str, Any]:
        """GET ``path`` until its status is one of ``until`` (or ``until(state)`` is true, or time is up)."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.request("GET", path, token=token).json()
            if (until(state) if callable(until) else state["status"] in until) or time.monotonic() > deadline:
                return state
            time.sleep(0.2)

    def said(self) -> str:
        return self.log.read_text()


def chunked(port: int, path: str, data: bytes, token: str) -> Reply:
    """A POST whose body comes in chunks, with no Content-Length."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", path)
        for name, value in (("Authorization", f"Bearer {token}"), ("Content-Type", "application/json"),
                            ("Transfer-Encoding", "chunked")):
            conn.putheader(name, value)
        conn.endheaders()
        for start in range(0, len(data), 8192):
            piece = data[start:start + 8192]
            try:
                conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            except OSError:  # refused before the rest was read
                break
        else:
            conn.send(b"0\r\n\r\n")
        response = conn.getresponse()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode())
    finally:
        conn.close()


def serve(url: str, folder: Path, model_url: str | None, *args: str, env: dict[str, str] | None = None,
          store: Store | None = None) -> Api:
    """``python -m clearside serve`` on a free port and the store at ``url``, once it answers."""
    port = free_port()
    log = folder / f"serve-{port}.log"
    environ = {**os.environ, "DATABASE_URL": url, "CLEARSIDE_DATA": str(folder), "OPENAI_API_KEY": "not-needed",
               "CLEARSIDE_SEMANTIC_CHECKS": "0", "CLEARSIDE_HEARTBEAT_SECONDS": "0.5", "PYTHONUNBUFFERED": "1",
               **({"OPENAI_BASE_URL": model_url} if model_url else {}), **(env or {})}
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "clearside", "serve", "--port", str(port), *args],
                                   cwd=REPO, env=environ, stdout=out, stderr=subprocess.STDOUT)
    api = Api(port, url, store or Store(url), process, log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"serve exited {process.returncode}:\n{api.said()}")
        try:
            if api.request("GET", "/v1/health", timeout=2).status == 200:
                return api
        except OSError:
            pass
        time.sleep(0.2)
    stop(api)
    raise AssertionError(f"serve never answered:\n{api.said()}")


def stop(api: Api) -> None:
    if api.process.poll() is None:
        api.process.terminate()
        try:
            api.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            api.process.kill()
            api.process.wait(timeout=10)


def snapshot(store: Store) -> dict[str, Any]:
    """Every row a request could change: the debates (status, title, owner, when updated), their challenges,
    versions, live turns and interventions counted, the tokens and whether revoked."""
    with store.read() as session:
        debates = session.execute(select(Debate.id, Debate.status, Debate.title, Debate.owner, Debate.updated_at)
                                  .order_by(Debate.id)).all()
        counts = {table.__tablename__: session.scalar(select(func.count()).select_from(table))
                  for table in (Challenge, DebateVersion, LiveTurn, InterventionRow)}
        tokens = session.execute(select(ApiToken.id, ApiToken.revoked_at).order_by(ApiToken.id)).all()
    return {"debates": [tuple(row) for row in debates], "counts": counts, "tokens": [tuple(row) for row in tokens]}
