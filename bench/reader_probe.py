"""``python -m clearside`` as a user runs it, with each model call and each load noted: the child process of
bench/reader.py.

Run as ``python bench/reader_probe.py LOG ARGS...`` from the root of the ClearSide tree to measure (the
interpreter's path starts with the working directory, as ``python -m clearside`` has it, not this file's folder):
it notes the moment it starts, then runs ``clearside.cli.main()`` with ARGS as the command line's own arguments,
unchanged, and writes one JSON line to LOG per event (times are ``time.time()``, so the parent can set them
against the moment it spawned this process):

- ``{"event": "start"}`` as this module runs (the interpreter is up), ``{"event": "cli_imported", "clearside"}``
  once the command line's module is imported (from that folder), ``{"event": "exit", "code"}`` at the end;
- ``{"event": "call", "agent", "start", "end", "seconds", "first_token_seconds", "prompt_tokens",
  "cached_prompt_tokens", "completion_tokens"}`` per model call (every provider's ``complete``, re-asks included);
- ``{"event": "model_load", "start", "end"}``: the embedded GGUF's first batching context (the first call waits on
  it), and ``{"event": "embeddings", "start", "end", "load_seconds"}``: the first sentence embedding, which loads
  MiniLM (on the engine's side thread while the first agent generates).

What it adds to the process is a few lines written per call: the wall time the parent measures is the command's.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

STARTED = time.time()
HERE = Path(__file__).resolve().parent
sys.path[:] = [os.getcwd()] + [p for p in sys.path if p and Path(p).resolve() != HERE]


class Log:
    def __init__(self, path: str) -> None:
        self.file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's whole life
        self.lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        with self.lock:
            self.file.write(json.dumps({"event": event, "t": time.time(), **fields}) + "\n")
            self.file.flush()


def watch_calls(log: Log) -> None:
    from clearside.providers.base import Provider

    complete = Provider.complete

    def noted(self: Provider, request: Any, on_delta: Any = None) -> Any:
        start = time.time()
        result = complete(self, request, on_delta)
        log.write("call", agent=request.agent, start=start, end=time.time(), seconds=round(result.seconds, 4),
                  first_token_seconds=round(result.first_token_seconds, 4), prompt_tokens=result.prompt_tokens,
                  cached_prompt_tokens=result.cached_prompt_tokens, completion_tokens=result.completion_tokens)
        return result

    Provider.complete = noted  # type: ignore[method-assign]


def watch_loads(log: Log) -> None:
    """The GGUF's batching context and MiniLM, each noted the first time it is made."""
    from clearside import embed

    encode, first = embed.encode, []

    def encoded(texts: Any) -> Any:
        start = time.time()
        out = encode(texts)
        if not first:
            first.append(start)
            log.write("embeddings", start=start, end=time.time(), load_seconds=embed.load_seconds)
        return out

    embed.encode = encoded
    try:
        from clearside.providers import embedded
    except ImportError:  # no llama-cpp-python: only other providers can run
        return
    load_batcher, made = embedded.load_batcher, []

    def loaded(*args: Any, **kwargs: Any) -> Any:
        start = time.time()
        out = load_batcher(*args, **kwargs)
        if not made:
            made.append(start)
            log.write("model_load", start=start, end=time.time())
        return out

    embedded.load_batcher = loaded


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python bench/reader_probe.py LOG ARGS...", file=sys.stderr)
        return 2
    log = Log(argv[0])
    log.write("start", process_start=STARTED)
    from clearside import cli

    log.write("cli_imported", clearside=str(Path(cli.__file__).resolve().parents[1]))
    watch_calls(log)
    watch_loads(log)
    code = 1
    try:
        sys.argv = ["clearside", *argv[1:]]
        code = cli.main()  # as `python -m clearside` calls it: the command line's own argv
    finally:
        log.write("exit", code=code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
