"""The raw decoding time of the tokens a document holds, for bench/reader.py's wall / raw ratio.

Method (measured in the bench's own run, after its debates, on the same machine and settings):

1. *Tokens shown*: every string a page shows of what the models wrote (bench/reader_text.py ``shown``: the
   normalized question and its context, the cases' summaries, arguments, assumptions and uncertainties, the
   synthesis; the badges' values too: category, evidence type, confidence), each tokenized on its own by the
   embedded GGUF's tokenizer. JSON keys and punctuation are not counted: they are the pipeline's cost, not text a
   reader gets.
2. *Seconds per token*: llama.cpp decoding on its own (llama-cpp-python's ``create_chat_completion``, streamed,
   no grammar, the provider's threads, repeat penalty and a temperature of 0.4) from an advocate's real prompt on
   a question of the bench, timed from the first token to the last so the prompt's evaluation is left out;
   ``repeats`` decodes, the median. The same decode under the advocates' JSON grammar is measured beside it.
3. *Raw seconds* = tokens shown × seconds per token (unconstrained). The ratio is the command's wall time over it.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench import reader_text

CALIBRATION_CTX = 2048


def llama(provider: Any) -> Any:
    from clearside.providers.embedded import load_llama

    return load_llama(provider.path, CALIBRATION_CTX, provider.n_threads, slot="reader-calibration")


def tokens_shown(document: dict[str, Any], tokenize: Any) -> int:
    """Tokens of every model-written string the document shows (badges' values included)."""
    texts = [text for _, text, _ in reader_text.shown(document)]
    texts += list(badges(document))
    return sum(len(tokenize(text)) for text in texts)


def badges(document: dict[str, Any]):
    cases = [document[s] for s in ("pro", "con") if document.get(s)] + list(document.get("personas") or [])
    for case in cases:
        for argument in case.get("arguments") or []:
            for key in ("category", "evidence_type", "confidence"):
                if isinstance(argument.get(key), str):
                    yield argument[key]


def tokenizer(provider: Any):
    llm, _ = llama(provider)
    return lambda text: llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)


def decode_once(provider: Any, messages: list[dict[str, str]], schema: dict | None, max_tokens: int) -> dict:
    from clearside.providers.embedded import on_llama_thread

    def work() -> dict:
        llm, lock = llama(provider)
        response_format = {"type": "json_object", "schema": schema} if schema else None
        count, first = 0, None
        with lock:
            for chunk in llm.create_chat_completion(messages, response_format=response_format, temperature=0.4,
                                                    max_tokens=max_tokens, repeat_penalty=provider.repeat_penalty,
                                                    stream=True):
                if chunk["choices"][0]["delta"].get("content"):
                    count += 1
                    first = first or time.perf_counter()
            ended = time.perf_counter()
        seconds = ended - (first or ended)
        return {"tokens": count, "decode_seconds": round(seconds, 4),
                "seconds_per_token": seconds / (count - 1) if count > 1 else None}

    return on_llama_thread(work)


def calibrate(provider: Any, question: str, *, repeats: int = 3, max_tokens: int = 256) -> dict[str, Any]:
    """Seconds per decoded token, unconstrained (the raw figure) and under the advocates' grammar (beside it)."""
    from clearside import agents
    from clearside.providers.small_schema import compact
    from clearside.schema import Proposition

    messages = agents.advocate_messages("pro", Proposition(raw_input=question, normalized_question=question))
    out: dict[str, Any] = {"question": question, "repeats": repeats, "max_tokens": max_tokens}
    for kind, schema in (("unconstrained", None), ("grammar", compact(agents.SIDE_WIRE))):
        runs = [decode_once(provider, messages, schema, max_tokens) for _ in range(repeats)]
        rates = [r["seconds_per_token"] for r in runs if r["seconds_per_token"]]
        out[kind] = {"runs": runs, "seconds_per_token": statistics.median(rates) if rates else None}
    return out
