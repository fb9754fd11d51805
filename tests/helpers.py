"""Valid agent replies for the scripted provider, and helpers that run a whole debate or regression batch.

Every builder returns a fresh dict that satisfies the agent's wire schema in
``clearside.agents`` (item counts, 8+ characters per string, within maxLength),
so tests can break one field at a time. Strings carry the side's tag, which lets
information-flow tests tell pro's text from con's.
"""

from __future__ import annotations

import copy
import json
import socket
import time
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "microservices.json"

QUESTION = "Should we adopt microservices architecture?"
NORMALIZED = "Should the organization adopt a microservices architecture for its software systems?"


def fixture_dict() -> dict[str, Any]:
    """The contract's example document (docs/design/schema.md#example; a full valid v1.0.0
    document)."""
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def orchestrator_reply(normalized: str = NORMALIZED, *, geography: str = "Global",
                       timeframe: str = "the next few years", domain: str = "Software architecture") -> dict[str, Any]:
    return {"normalized_question": normalized,
            "context": {"geography": geography, "timeframe": timeframe, "domain": domain}}


_CATEGORIES = {"pro": ("technical", "economic", "social", "political"),
               "con": ("technical", "environmental", "ethical", "economic")}
# Distinct points about the question (the substance checks drop repeats, echoes and off-topic arguments).
_POINTS = {
    "pro": [("independent scaling of each microservice lowers infrastructure cost",
             "each service scales with its own load instead of scaling the whole application"),
            ("small teams can release their microservices without waiting on each other",
             "separate deployment pipelines remove the coordination of one big release train"),
            ("each service can use the database and language that suit its job",
             "microservices let a team pick the best tool for one bounded problem"),
            ("a failing service does not stop the rest of the system",
             "fault isolation between services keeps an outage local to one component")],
    "con": [("a distributed architecture adds network latency to every request",
             "calls that were in-process become remote calls between services"),
            ("running many services multiplies monitoring and deployment work",
             "each microservice needs its own pipeline, logging, alerting and on-call ownership"),
            ("debugging a request that crosses many services is slow and hard",
             "tracing a fault across service boundaries needs tooling the team may not have"),
            ("splitting the data across services makes consistent transactions difficult",
             "a monolith's single database becomes several stores kept in sync by messages")],
}
_SUMMARY = {
    "pro": ["microservices let each part of the system scale on its own",
            "teams gain speed by deploying their services independently",
            "an outage in one service stays contained"],
    "con": ["a distributed system brings operational complexity",
            "network calls between services slow requests down",
            "tracing failures across services takes new tooling"],
}


def side_reply(tag: str, *, arguments: int = 3) -> dict[str, Any]:
    """A valid advocate reply; every string names ``tag`` so it is unique to that side."""
    t = tag.capitalize()
    categories = _CATEGORIES.get(tag, ("technical", "economic", "social", "political"))
    points = _POINTS.get(tag, _POINTS["pro"])
    return {
        "executive_summary": [f"{t}: {point}" for point in _SUMMARY.get(tag, _SUMMARY["pro"])],
        "arguments": [
            {
                "category": categories[i],
                "claim": f"{t}: {points[i][0]}",
                "explanation": f"{t} explanation {i + 1}: {points[i][1]}.",
                "evidence_type": ("fact", "projection", "analogy", "value_judgment")[i],
                "confidence": ("high", "medium", "low", "medium")[i],
            }
            for i in range(arguments)
        ],
        "assumptions": [f"{t} assumption A: the organization has DevOps maturity",
                        f"{t} assumption B: traffic keeps growing each year"],
        "uncertainties": [f"{t} uncertainty A: cost savings depend on usage",
                          f"{t} uncertainty B: team adaptation time varies"],
    }


def moderator_reply() -> dict[str, Any]:
    return {
        "areas_of_agreement": ["Moderator: both sides accept that change is costly",
                               "Moderator: both sides see trade-offs in flexibility"],
        "core_disagreements": [{"topic": "Complexity management",
                                "description": "Moderator: they disagree on whether complexity is manageable",
                                "root_cause": "Moderator: different views of team capability"}],
        "assumption_conflicts": [{"pro_assumption": "Pro assumption A: the organization has DevOps maturity",
                                  "con_assumption": "Con assumption A: the organization has DevOps maturity",
                                  "conflict_description": "Moderator: contradictory readings of team readiness"}],
        "evidence_gaps": ["Moderator: current system performance benchmarks",
                          "Moderator: projected growth requirements"],
        "decision_hinges": ["Moderator: does the team have distributed systems experience?",
                            "Moderator: what are the real scaling requirements?"],
    }


def single_reply(pro: dict[str, Any] | None = None, con: dict[str, Any] | None = None,
                 moderator: dict[str, Any] | None = None, *, ids: bool = True) -> dict[str, Any]:
    """A single-pass reply (``--strategy single``) made of the usual sections; with ``ids`` the first conflict
    picks its assumptions by place (P1, C2), as the embedded model's grammar makes it."""
    reply: dict[str, Any] = {}
    for side, body in (("pro", pro or side_reply("pro")), ("con", con or side_reply("con"))):
        reply |= {f"{side}_{field}": value for field, value in body.items()}
    synthesis = copy.deepcopy(moderator or moderator_reply())
    if ids:
        synthesis["assumption_conflicts"][0] |= {"pro_assumption": "P1", "con_assumption": "C2"}
    return reply | synthesis


def challenge_reply(classification: str = "values_dependent",
                    about: str = "the organization's DevOps maturity") -> dict[str, Any]:
    """A challenge answer whose analysis is about ``about`` (the challenged element)."""
    return {
        "analysis": [f"Challenge: {about} is asserted, not measured",
                     "Challenge: whether the risk is worth it is a question of priorities"],
        "historical_context": ["Challenge: early adopters invested in platform teams first"],
        "classification": classification,
    }


def scripted_debate(provider: Any, *, orchestrator: dict[str, Any] | None = None,
                    pro: dict[str, Any] | None = None, con: dict[str, Any] | None = None,
                    moderator: dict[str, Any] | None = None) -> dict[str, Any]:
    """Enqueue one valid reply per debate agent; returns the replies that were enqueued."""
    replies = {
        "orchestrator": orchestrator if orchestrator is not None else orchestrator_reply(),
        "pro": pro if pro is not None else side_reply("pro"),
        "con": con if con is not None else side_reply("con"),
        "moderator": moderator if moderator is not None else moderator_reply(),
    }
    for agent, reply in replies.items():
        provider.enqueue(copy.deepcopy(reply), agent=agent)
    return replies


def strings_in(value: Any) -> list[str]:
    """Every string inside a JSON-like value (keys excluded)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


def side_texts(reply: dict[str, Any]) -> list[str]:
    """The free-text strings of an advocate reply (enum values such as "technical" excluded)."""
    texts = [*reply["executive_summary"], *reply["assumptions"], *reply["uncertainties"]]
    for argument in reply["arguments"]:
        texts += [argument["claim"], argument["explanation"]]
    return texts


def request_text(request: Any) -> str:
    """All message contents of one recorded ChatRequest, joined."""
    return "\n".join(message["content"] for message in request.messages)


class WebPages:
    """A real HTTP server on 127.0.0.1 that is not a model server: every GET and POST gets the same web page (a web
    server's or a proxy's error page, as nginx sends it), or ``content_type``/``body`` as set.

        with WebPages(404) as pages:
            OllamaProvider("llama3.2", host=pages.url)...
    """

    PAGE = "<html>\r\n<head><title>{0}</title></head>\r\n<body>\r\n<center><h1>{0}</h1></center>\r\n" \
           "<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"

    def __init__(self, status: int, *, content_type: str = "text/html", body: str | None = None) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        page = body if body is not None else self.PAGE.format(f"{status} Not Found" if status == 404 else
                                                             f"{status} Internal Server Error")

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                data = page.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def version_string(self) -> str:
                return "nginx/1.25.3"

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> WebPages:
        import threading

        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveResponder:
    """Builds a valid reply from any wire schema, so a scripted live debate adapts to what each turn asks.

    Strings carry the agent's name and its call number, so tests can see who said
    what and where it travelled. ``overrides[(agent, n)]`` replaces the n-th call
    (1-based) of that agent: a dict (merged over the generated reply) or a string
    (sent as is). ``speech_words`` sets the length of every speech.
    """

    def __init__(self, *, speech_words: int = 30, overrides: dict[tuple[str, int], Any] | None = None) -> None:
        self.speech_words = speech_words
        self.overrides = overrides or {}
        self.calls: dict[str, int] = {}

    def __call__(self, request: Any) -> Any:
        agent = request.agent
        self.calls[agent] = n = self.calls.get(agent, 0) + 1
        override = self.overrides.get((agent, n))
        if isinstance(override, str):
            return override
        reply = self.build(request.schema or {}, agent, n)
        if isinstance(override, dict):
            reply.update(copy.deepcopy(override))
        return reply

    def build(self, schema: dict[str, Any], agent: str, n: int, key: str = "") -> Any:
        kind = schema.get("type")
        if "enum" in schema:
            return schema["enum"][n % len(schema["enum"])]
        if kind == "object":
            return {k: self.build(v, agent, n, k) for k, v in schema.get("properties", {}).items()}
        if kind == "array":
            return [self.build(schema["items"], agent, n, f"{key} {i + 1}") for i in range(schema.get("minItems", 1))]
        if key == "speech":
            words = f"{agent.capitalize()} speech {n} explains the position on service boundaries".split()
            return " ".join((words * (self.speech_words // len(words) + 1))[: self.speech_words]) + "."
        if key == "normalized_question":
            return NORMALIZED
        text = f"{agent.capitalize()} {key.replace('_', ' ')} in call {n} about service boundaries"
        return text[: schema.get("maxLength", 200)]


def settle(at: Any, until, *, describe=lambda at: "", timeout: float = 30, pause: float = 0.05) -> Any:
    """Rerun an AppTest script (timers never fire in AppTest) until ``until(at)`` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        assert not at.exception, at.exception
        if until(at):
            return at
        time.sleep(pause)
    raise AssertionError("the page never reached the expected state:\n" + describe(at))


def stored(debate_id: str) -> Any:
    """The live transcript as the default store (this test's private data folder) has it now."""
    from clearside.live.exchange import load_live
    from clearside.store import open_store

    return load_live(open_store(), debate_id)


def script_file(tmp_path: Path, name: str = "script.json", **queues: Any) -> str:
    """A ``scripted:FILE`` provider spec whose file holds these queues (for CLI runs in another process)."""
    path = tmp_path / name
    path.write_text(json.dumps(queues), encoding="utf-8")
    return f"scripted:{path}"


def full_script(tmp_path: Path, **overrides: Any) -> str:
    """One valid reply per debate agent, any of them replaced by ``overrides``."""
    queues = {"orchestrator": [orchestrator_reply()], "pro": [side_reply("pro")], "con": [side_reply("con")],
              "moderator": [moderator_reply()], **overrides}
    return script_file(tmp_path, **queues)


def flagship_replies() -> dict[str, dict[str, Any]]:
    """The flagship reference's sections cut to the agents' wire limits: a realistic, on-topic debate."""
    from clearside.quality.references import flagship

    doc = flagship().document

    def short(text: str, limit: int = 175) -> str:
        if text.endswith("?") and len(text) <= limit:
            return text
        text = text.split(". ")[0].rstrip(".") + "."
        return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "."

    def side(name: str) -> dict[str, Any]:
        s = doc[name]
        arguments = [{**a, "explanation": short(a["explanation"])} for a in s["arguments"][:4]]
        # the assumptions the moderator's first two conflicts pair come first, so those conflicts stay traceable
        paired = [c[f"{name}_assumption"] for c in doc["moderator"]["assumption_conflicts"][:2]]
        assumptions = list(dict.fromkeys([*paired, *s["assumptions"]]))[:3]
        return {"executive_summary": [short(t, 105) for t in s["executive_summary"][:3]], "arguments": arguments,
                "assumptions": [short(t, 125) for t in assumptions],
                "uncertainties": [short(t, 125) for t in s["uncertainties"][:3]]}

    def cut(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: short(v, 75) if k == "topic" else cut(v) for k, v in value.items()}
        return short(value, 125) if isinstance(value, str) else [cut(v) for v in value]

    m = cut(doc["moderator"])
    return {
        "orchestrator": orchestrator_reply(doc["proposition"]["normalized_question"], geography="United States",
                                           timeframe="Next five years", domain="AI infrastructure policy"),
        "pro": side("pro"),
        "con": side("con"),
        "moderator": {"areas_of_agreement": m["areas_of_agreement"][:3],
                      "core_disagreements": m["core_disagreements"][:3],
                      "assumption_conflicts": m["assumption_conflicts"][:2],
                      "evidence_gaps": m["evidence_gaps"][:3], "decision_hinges": m["decision_hinges"][:4]},
    }


def flagship_script(tmp_path: Path, runs: int = 3, name: str = "flagship.json", **overrides: Any) -> str:
    """A ``scripted:FILE`` spec answering ``runs`` flagship debates; ``overrides`` replace an agent's reply."""
    replies = {**flagship_replies(), **overrides}
    return script_file(tmp_path, name, **{agent: [copy.deepcopy(reply)] * runs for agent, reply in replies.items()})


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """``python -m clearside ARGS`` in-process: exit code, stdout, stderr."""
    from clearside.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_regression(suite: Any, provider: Any, store: Any = None, **settings: Any) -> dict[str, Any]:
    """A regression batch run to its end in this process on the runtime, as ``regress`` runs it (its debates too):
    its report. ``suite``: a built-in's name or a loaded suite; ``settings``: the fields of
    :class:`clearside.quality.workflow.RegressSettings` (runs, retries, window...)."""
    from clearside import modes, runtime
    from clearside.quality import workflow as batches
    from clearside.store import open_store

    store = store or open_store()
    modes.host(store.url, role="test", serve=False)  # a host already serving here is used as it is
    batch_id = batches.enqueue_regress(suite, provider, batches.RegressSettings(**settings), here=True,
                                       store_url=store.url)
    state = runtime.wait(batch_id, 300, store.url)
    assert state.finished and state.result, state
    return state.result["report"]


def distinct(texts: list[str], wanted: int = 6) -> list[str]:
    """The first ``wanted`` of ``texts`` that make different points (ArgKP has several wordings of one point; the
    checks would drop a repeat and a side thinned so is asked for more)."""
    from clearside.checks import Embeddings, sides

    kept: list[str] = []
    for text in texts:
        if len(kept) == wanted:
            break
        if not sides.duplicates([*kept, text], Embeddings()):
            kept.append(text)
    return kept


def argkp_debate(topic: str) -> dict[str, dict[str, Any]]:
    """Replies for a debate on an ArgKP dev topic, from ArgKP's own human arguments on it (on topic, so the
    substance checks keep them); the flagship's assumptions and moderator, whose conflicts pair those."""
    from clearside.quality.references import argkp_arguments

    replies = flagship_replies()
    replies["orchestrator"] = orchestrator_reply(topic, geography="Global", timeframe="The next few years",
                                                 domain="Public policy")
    for side in ("pro", "con"):
        said = distinct([text for text in argkp_arguments(topic)[side] if len(text) <= 100])  # whole: none cut
        replies[side]["executive_summary"] = said[:3]
        replies[side]["arguments"] = [{**argument, "claim": claim, "explanation": claim, "category": category}
                                      for argument, claim, category in zip(replies[side]["arguments"][:3], said[3:6],
                                                                           ("economic", "social", "ethical"),
                                                                           strict=True)]
    return replies


def focused_answers() -> Any:
    """A scripted provider's ``fallback`` that answers the focused strategy's small calls from the same valid
    replies as :func:`scripted_debate`: categories, one argument per call (in the category the call allows),
    summary fields, and the synthesis one field per call. Each side's arguments are handed out in order."""
    replies = {"orchestrator": orchestrator_reply(), "pro": side_reply("pro", arguments=4),
               "con": side_reply("con", arguments=4), "moderator": moderator_reply()}
    handed: dict[str, int] = {}

    def answer(request: Any) -> dict[str, Any]:
        reply = replies[request.agent]
        wanted = list((request.schema or {}).get("properties", {}))
        if wanted == ["categories"]:
            return {"categories": [a["category"] for a in reply["arguments"][:3]]}
        if wanted == ["arguments"]:
            allowed = request.schema["properties"]["arguments"]["items"]["properties"]["category"]["enum"]
            n = handed.get(request.agent, 0)
            handed[request.agent] = n + 1
            return {"arguments": [{**reply["arguments"][n], "category": allowed[0]}]}
        return {name: copy.deepcopy(reply[name]) for name in wanted} if wanted else copy.deepcopy(reply)

    return answer


def download(at, files: dict[str, bytes], label: str) -> str:
    [button] = [b for b in at.get("download_button") if b.proto.label == label]
    return files[button.proto.url.rsplit("/", 1)[-1].split(".")[0]].decode("utf-8")
