"""The embedded model (SmolLM2, in-process) under the issue-20 promises: nothing the program says is lost while
llama.cpp works, and a grammar llama.cpp cannot compile is reported as what it is.

llama-cpp-python's ``verbose=False`` points the process's stderr at /dev/null while it loads a model, dropping
whatever another thread prints meanwhile: an agent's progress line, a warning. The first test runs, in a child
process (so its file descriptor 2 is captured for real), two short real calls of two agents (each loads a context
of its own, as pro and con do) beside a thread writing a line to file descriptor 2 every 2 ms, and checks every
line arrived whole. (With verbose=False about one line in seven is lost.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clearside.errors import ProviderError
from clearside.providers import ChatRequest, get_provider

ROOT = Path(__file__).resolve().parents[2]
CHILD = r"""
import os, sys, threading, time
from clearside.cli.common import progress
from clearside.runtime.events import Event
from clearside.providers import ChatRequest, get_provider

provider = get_provider("embedded")
printer = progress()
stop = threading.Event()

def tick():  # one write(2) per line: two threads' print() calls could interleave their parts, a write cannot
    n = 0
    while not stop.is_set():
        os.write(2, f"tick {n}\n".encode())
        n += 1
        time.sleep(0.002)
    os.write(2, f"ticked {n}\n".encode())

def agent(name):
    printer(Event("start", name))
    try:
        reply = provider.complete(ChatRequest(messages=[{"role": "user", "content": "Say yes."}], agent=name,
                                              max_tokens=6, temperature=0.0))
    except Exception:
        printer(Event("error", name))
        raise
    printer(Event("done", name, data={"seconds": reply.seconds, "tokens": reply.completion_tokens}))

ticker = threading.Thread(target=tick)
ticker.start()
time.sleep(0.05)
agents = [threading.Thread(target=agent, args=(name,)) for name in ("pro", "con")]
for thread in agents:
    thread.start()
for thread in agents:
    thread.join()
time.sleep(0.05)
stop.set()
ticker.join()
"""


def test_every_line_printed_while_the_model_loads_and_generates_arrives() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLEARSIDE_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    ticked = int(next(line for line in lines if line.startswith("ticked ")).split()[1])
    ticks = [line for line in lines if line.startswith("tick ")]
    missing = sorted(set(range(ticked)) - {int(line.split()[1]) for line in ticks if line.split()[1].isdigit()})
    glued = [line for line in lines if "tick" in line and not re.fullmatch(r"tick \d+|ticked \d+", line)]
    assert not missing and not glued, f"lines lost while llama.cpp worked: ticks {missing[:5]}, glued {glued[:3]}"
    assert len(ticks) == ticked
    assert ticked > 50  # the calls took a while, and the ticker printed all along
    for name, label in (("pro", "writing the case FOR"), ("con", "writing the case AGAINST")):
        assert f"[{name}] {label}…" in lines
        assert [line for line in lines if re.fullmatch(rf"\[{name}\] done in [0-9.]+ s, \d+ tokens", line)]
    # every line is whole: none holds two progress lines or a tick glued to one
    assert all(line.count("[") <= 1 and line.count("tick") <= 1 for line in lines if not line.startswith("ticked"))
    # and llama.cpp's own chatter stayed off stderr (its log callback routes it to the clearside.llama logger)
    assert not [line for line in lines if "llama_" in line or "Model metadata" in line or "AVX" in line]


def test_a_grammar_llama_cpp_cannot_compile_is_not_blamed_on_the_input(monkeypatch) -> None:
    """The schema-to-grammar conversion is made to hand llama.cpp a grammar it cannot parse; the real sampler
    refuses it and the provider says so, instead of "Shorten the input or raise CLEARSIDE_N_CTX"."""
    from llama_cpp import llama_chat_format
    from llama_cpp.llama_grammar import LlamaGrammar

    monkeypatch.setattr(llama_chat_format, "_grammar_for_response_format",
                        lambda *args, **kwargs: LlamaGrammar(_grammar='root ::= "unterminated'))
    provider = get_provider("embedded")
    with pytest.raises(ProviderError) as caught:
        provider.complete(ChatRequest(messages=[{"role": "user", "content": "Say yes."}], agent="check",
                                      schema={"type": "object", "properties": {"a": {"type": "string"}}},
                                      max_tokens=4))
    message = str(caught.value)
    assert "could not compile the grammar" in message and "CLEARSIDE_N_CTX" not in message
    assert "embedded model 'SmolLM2-135M-Instruct.Q4_1.gguf' at " in message  # provider, model, endpoint (file)
    assert "not in your input" in message
