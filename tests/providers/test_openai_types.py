"""The openai client's response types are built before any thread reads a stream.

The client defers each pydantic schema to its first use, and two threads building one at once fail
("type object 'ChatCompletionChunk' has no attribute '__pydantic_core_schema__'": a comparison's run failed so on
CI). Each case runs in a fresh interpreter, where nothing is built yet, with thread switches as often as Python
allows, so that an unsettled type fails most runs.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

RACE = textwrap.dedent("""
    import sys, threading
    sys.setswitchinterval(1e-6)
    from openai._models import construct_type
    from openai.types.chat import ChatCompletionChunk
    from clearside.providers.openai_compat import OpenAIProvider

    OpenAIProvider("m", base_url="http://127.0.0.1:9/v1")
    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None,
                          "logprobs": {"content": [{"token": "hi", "logprob": -0.1, "top_logprobs": []}]}}],
             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2,
                       "prompt_tokens_details": {"cached_tokens": 0}}}
    gate, errors = threading.Barrier(16), []

    def read():
        gate.wait()
        try:
            parsed = construct_type(value=chunk, type_=ChatCompletionChunk)
            assert parsed.choices[0].delta.content == "hi" and parsed.usage.prompt_tokens_details.cached_tokens == 0
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=read) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(len(errors), errors[:1])
""")


def test_sixteen_threads_reading_their_first_chunk_at_once_all_parse_it():
    run = subprocess.run([sys.executable, "-c", RACE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0 []", run.stdout
