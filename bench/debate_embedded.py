"""Embedded-provider latency: full debates, one challenge each, and the pipeline against raw llama.cpp.

For each of N fixed questions (``--runs``, default 3) it runs a full debate on the
embedded provider (the in-process GGUF), then one challenge on the result, and
reports the wall time, per-agent completion tokens / seconds / attempts, and the
pipeline's tokens per second (sum of completion tokens / sum of agent seconds).
The GGUF (by a short call unlike the debate's) and the embedding model are
loaded before timing.

Two comparisons with raw llama.cpp, measured in the same run:

1. the replay: every call the debate made (re-asks included) is sent again, one at
   a time, straight to ``Llama.create_chat_completion`` with the same messages,
   temperature and repeat penalty, its grammar the literal text the pipeline
   received, so that llama.cpp evaluates the same prompts and decodes the same
   completions with no schema, checks or engine around them. The replay has a
   context each for pro, con and the moderator and one for the other agents (each
   agent's next call reuses the prefix it evaluated before, as the pipeline's
   contexts let it). Ratio = debate wall / the replay's seconds; goal <= 1.1 (the benchmarks' own);
2. the pro agent's own prompt decoded RAW on a shared ``Llama`` twice: (a)
   unconstrained and (b) with the same grammar the pipeline uses (``json_object`` +
   ``compact(SIDE_WIRE)``), timing decoding only (first token to last); goal:
   pipeline tokens/s >= 0.85 x raw tokens/s.

Goals: debate <= 15 s (the benchmarks' own; NFR-101 asks < 30 s), challenge < 10 s (NFR-104); both requirements:
docs/design/requirements.md#nfr-100.
``report(quick=True)`` (``python -m bench``) runs one question, ``quick=False`` three.

Run from the repository root:  python bench/debate_embedded.py [--runs 3] [--threads N]
Writes bench/results/debate_embedded.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside import agents, checks  # noqa: E402
from clearside.errors import ClearSideError  # noqa: E402
from clearside.providers.base import ChatRequest, Completion  # noqa: E402
from clearside.providers.embedded import EmbeddedProvider, load_llama, on_llama_thread  # noqa: E402
from clearside.providers.small_schema import compact  # noqa: E402
from clearside.static.engine import Engine  # noqa: E402
from clearside.static.run import DebateRun  # noqa: E402

QUESTIONS = [
    "Should the United States impose a temporary moratorium on new large-scale AI data centers?",
    "Build or buy our feature-flag service?",
    "Leave my job for a startup?",
]
DEBATE_GOAL_S, CHALLENGE_GOAL_S, RATIO_GOAL = 30.0, 10.0, 0.85
WALL_GOAL_S, REPLAY_GOAL = 15.0, 1.1  # the benchmarks' goals: a static debate within 15 s, within 1.1 x raw llama.cpp
REPLAY_CONTEXTS = ("pro", "con", "moderator", "shared")
RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    return {"loadavg": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count()}


def per_agent(usage) -> dict:
    return {name: {"completion_tokens": u.completion_tokens, "seconds": round(u.seconds, 2), "attempts": u.calls}
            for name, u in usage.items()}


def raw_decode(provider: EmbeddedProvider, messages: list[dict], schema: dict | None, max_tokens: int) -> dict:
    """Stream one completion of ``messages`` on the shared Llama; decoding speed excludes prompt evaluation.

    It runs on the provider's llama thread, as the pipeline's calls do (OpenMP's worker team is per thread).
    """
    return on_llama_thread(lambda: _raw_decode(provider, messages, schema, max_tokens))


def _raw_decode(provider: EmbeddedProvider, messages: list[dict], schema: dict | None, max_tokens: int) -> dict:
    llm, lock = load_llama(provider.path, provider.n_ctx, provider.n_threads)
    response_format = {"type": "json_object", "schema": schema} if schema else None
    tokens, first = 0, None
    with lock:
        started = time.perf_counter()
        for chunk in llm.create_chat_completion(messages, response_format=response_format, temperature=0.4,
                                                max_tokens=max_tokens,
                                                repeat_penalty=provider.repeat_penalty, stream=True):
            if chunk["choices"][0]["delta"].get("content"):
                tokens += 1
                first = first or time.perf_counter()
        ended = time.perf_counter()
    decode_s = ended - (first or ended)
    return {"tokens": tokens, "call_seconds": round(ended - started, 2), "decode_seconds": round(decode_s, 2),
            "tokens_per_s": round((tokens - 1) / decode_s, 2) if decode_s > 0 else 0.0}


class EveryRunFailed(RuntimeError):
    pass


class RecordingProvider(EmbeddedProvider):
    """The embedded provider, keeping each call's request and completion for the replay."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[ChatRequest, Completion]] = []

    def complete(self, request: ChatRequest, on_delta=None) -> Completion:
        completion = super().complete(request, on_delta)
        self.calls.append((request, completion))  # pro and con may finish at once: list.append is atomic
        return completion


def replay_context(provider: EmbeddedProvider, agent: str) -> tuple[Any, threading.Lock]:
    """The raw replay's own llama.cpp context for this agent (pro, con and moderator one each, the rest one), so
    that an agent's next call reuses the prefix its previous one evaluated, as the pipeline's contexts do."""
    slot = agent if agent in REPLAY_CONTEXTS else "shared"
    return load_llama(provider.path, provider.n_ctx, provider.n_threads, f"replay-{slot}")


def gbnf_literal(text: str) -> str:
    """A grammar whose only sentence is ``text``."""
    escaped = "".join("\\\\" if c == "\\" else '\\"' if c == '"' else f"\\x{ord(c):02x}" if ord(c) < 0x20 else c
                      for c in text)
    return f'root ::= "{escaped}"'


def replay(provider: EmbeddedProvider, calls: list[tuple[ChatRequest, Completion]]) -> dict:
    """Each call again, straight to llama.cpp, one at a time, forced to the text the pipeline received."""
    from llama_cpp import LlamaGrammar

    def one(request: ChatRequest, completion: Completion) -> tuple[float, int, str]:
        llm, lock = replay_context(provider, request.agent)
        grammar = LlamaGrammar.from_string(gbnf_literal(completion.text), verbose=False)
        parts = []
        with lock:
            started = time.perf_counter()
            for chunk in llm.create_chat_completion(request.messages, grammar=grammar,
                                                    temperature=request.temperature,
                                                    max_tokens=2 * completion.completion_tokens + 16,
                                                    repeat_penalty=provider.repeat_penalty, stream=True):
                if delta := chunk["choices"][0]["delta"].get("content"):
                    parts.append(delta)
            return time.perf_counter() - started, len(parts), "".join(parts)

    seconds, tokens, same = 0.0, 0, 0
    for request, completion in calls:
        took, count, text = on_llama_thread(lambda r=request, c=completion: one(r, c))
        seconds, tokens, same = seconds + took, tokens + count, same + (text == completion.text)
    return {"calls": len(calls), "seconds": round(seconds, 2), "tokens": tokens, "same_text": same,
            "pipeline_tokens": sum(c.completion_tokens for _, c in calls),
            "pipeline_call_seconds": round(sum(c.seconds for _, c in calls), 2)}


def one_run(engine: Engine, provider: RecordingProvider, question: str) -> dict:
    run = DebateRun.from_input(question)
    provider.calls.clear()
    started = time.perf_counter()
    document = engine.run(run)
    debate_s = time.perf_counter() - started
    calls = list(provider.calls)
    replayed = replay(provider, calls)

    started = time.perf_counter()
    engine.challenge(document, "question_assumption", document.pro.assumptions[0])
    challenge_s = time.perf_counter() - started

    tokens = sum(u.completion_tokens for u in run.usage.values())
    agent_s = sum(u.seconds for u in run.usage.values())
    pipeline_tps = tokens / agent_s if agent_s else 0.0
    # decoding only, as the raw runs measure it: leave out each call's prompt evaluation (time to first token)
    decode_s = agent_s - sum(u.first_token_seconds for u in run.usage.values())
    decode_tps = tokens / decode_s if decode_s > 0 else 0.0
    messages = agents.advocate_messages("pro", run.proposition)
    grammar = raw_decode(provider, messages, compact(agents.SIDE_WIRE), agents.PRO.max_tokens)
    # unconstrained text rarely stops on its own: decode as many tokens as the grammar run did
    raw = {"unconstrained": raw_decode(provider, messages, None, max(grammar["tokens"], 16)), "grammar": grammar}
    return {
        "question": question, "debate_seconds": round(debate_s, 2), "challenge_seconds": round(challenge_s, 2),
        "agents": per_agent(run.usage), "challenge": per_agent(engine.last_usage)["challenge"],
        "completion_tokens": tokens, "agent_seconds": round(agent_s, 2),
        "pipeline_tokens_per_s": round(pipeline_tps, 2), "wall_tokens_per_s": round(tokens / debate_s, 2),
        "pipeline_decode_tokens_per_s": round(decode_tps, 2),
        "raw": raw,
        "ratio_vs_raw": {kind: round(pipeline_tps / r["tokens_per_s"], 3) if r["tokens_per_s"] else None
                         for kind, r in raw.items()},
        "wall_ratio_vs_raw": {kind: round(tokens / debate_s / r["tokens_per_s"], 3) if r["tokens_per_s"] else None
                              for kind, r in raw.items()},
        "decode_ratio_vs_raw": {kind: round(decode_tps / r["tokens_per_s"], 3) if r["tokens_per_s"] else None
                                for kind, r in raw.items()},
        "replay": replayed,
        "replay_ratio": round(debate_s / replayed["seconds"], 3) if replayed["seconds"] else None,
        "debate_ok": debate_s < DEBATE_GOAL_S, "challenge_ok": challenge_s < CHALLENGE_GOAL_S,
    }


def show(result: dict) -> None:
    print(f"\n== {result['question']}")
    print(f"  debate {result['debate_seconds']:6.1f} s (goal < {DEBATE_GOAL_S:.0f}: "
          f"{'ok' if result['debate_ok'] else 'MISSED'})   challenge {result['challenge_seconds']:5.1f} s "
          f"(goal < {CHALLENGE_GOAL_S:.0f}: {'ok' if result['challenge_ok'] else 'MISSED'})")
    print(f"  {'agent':<13}{'tokens':>8}{'seconds':>9}{'attempts':>10}{'tok/s':>8}")
    for name, row in {**result["agents"], "challenge": result["challenge"]}.items():
        tps = row["completion_tokens"] / row["seconds"] if row["seconds"] else 0.0
        print(f"  {name:<13}{row['completion_tokens']:>8}{row['seconds']:>9.1f}{row['attempts']:>10}{tps:>8.1f}")
    replayed, ratio = result["replay"], result["replay_ratio"]
    print(f"  raw llama.cpp replay of the debate's {replayed['calls']} calls: {replayed['seconds']:.1f} s for "
          f"{replayed['tokens']} tokens (the pipeline's: {replayed['pipeline_tokens']}; same text in "
          f"{replayed['same_text']}/{replayed['calls']}) -> debate wall / raw {result['replay_ratio']} "
          f"(goal <= {REPLAY_GOAL}: {'ok' if ratio and ratio <= REPLAY_GOAL else 'MISSED'})")
    print(f"  pipeline {result['pipeline_tokens_per_s']:.1f} tok/s (tokens / agent seconds; "
          f"{result['wall_tokens_per_s']:.1f} tok/s over the debate's wall time; "
          f"{result['pipeline_decode_tokens_per_s']:.1f} tok/s decoding only)")
    for kind, raw in result["raw"].items():
        ratio = result["ratio_vs_raw"][kind]
        print(f"  raw {kind:<13} {raw['tokens']:>4} tokens, decoding {raw['tokens_per_s']:5.1f} tok/s -> "
              f"pipeline/raw {ratio} (goal >= {RATIO_GOAL}: {'ok' if ratio and ratio >= RATIO_GOAL else 'MISSED'}; "
              f"by wall time {result['wall_ratio_vs_raw'][kind]}; decoding only "
              f"{result['decode_ratio_vs_raw'][kind]})")


def run(runs: int = 3, threads: int | None = None) -> dict:
    """The benchmark: prints as it goes, writes bench/results/debate_embedded.json and returns what it wrote."""
    before = machine()
    print(f"load before: {before['loadavg']} on {before['cpu_count']} CPUs")
    provider = RecordingProvider(n_threads=threads)
    load_started = time.perf_counter()
    # whatever the provider loads, loaded by a call unlike the debate's, and the replay's contexts
    provider.complete(ChatRequest(messages=[{"role": "user", "content": "Reply with OK."}], max_tokens=4,
                                  agent="check"))
    for agent in REPLAY_CONTEXTS:
        replay_context(provider, agent)
    load_s = time.perf_counter() - load_started
    embed_started = time.perf_counter()
    embeddings = checks.Embeddings()
    embeddings.warm()
    embed_s = time.perf_counter() - embed_started
    print(f"model {provider.path.name}, {provider.n_threads} threads, loaded in {load_s:.1f} s "
          f"(with {len(REPLAY_CONTEXTS)} contexts for the replay); embedding model in {embed_s:.1f} s")
    engine = Engine(provider, retries=2, embeddings=embeddings)

    results, failures = [], []
    for i in range(runs):
        question = QUESTIONS[i % len(QUESTIONS)]
        try:
            results.append(one_run(engine, provider, question))
            show(results[-1])
        except ClearSideError as exc:  # a schema failure after every re-ask is a result too
            failures.append({"question": question, "error": str(exc)})
            print(f"\n== {question}\n  FAILED: {exc}")
    if not results:
        raise EveryRunFailed(f"every run failed: {failures[-1]['error'] if failures else 'no runs'}")

    def mean(key: str) -> float:
        return round(sum(r[key] for r in results) / len(results), 2)

    replay_s = sum(r["replay"]["seconds"] for r in results)
    summary = {"debate_seconds_mean": mean("debate_seconds"), "challenge_seconds_mean": mean("challenge_seconds"),
               "pipeline_tokens_per_s_mean": mean("pipeline_tokens_per_s"),
               "replay_seconds_mean": round(replay_s / len(results), 2),
               "replay_ratio": round(sum(r["debate_seconds"] for r in results) / replay_s, 3) if replay_s else None,
               "ratio_vs_raw_grammar_mean": round(sum(r["ratio_vs_raw"]["grammar"] or 0 for r in results)
                                                  / len(results), 3),
               "debates_within_goal": sum(r["debate_ok"] for r in results),
               "debates_within_wall_goal": sum(r["debate_seconds"] <= WALL_GOAL_S for r in results),
               "challenges_within_goal": sum(r["challenge_ok"] for r in results), "failed_runs": len(failures)}
    after = machine()
    print(f"\nmean debate {summary['debate_seconds_mean']} s, mean challenge {summary['challenge_seconds_mean']} s, "
          f"{summary['debates_within_goal']}/{len(results)} debates and "
          f"{summary['challenges_within_goal']}/{len(results)} challenges within goal; debate wall / raw replay "
          f"{summary['replay_ratio']}")
    print(f"load after: {after['loadavg']} on {after['cpu_count']} CPUs")

    out = {"model": provider.path.name, "threads": provider.n_threads, "load_seconds": round(load_s, 2),
           "embedding_load_seconds": round(embed_s, 2), "machine_before": before, "machine_after": after,
           "goals": {"debate_s": DEBATE_GOAL_S, "wall_s": WALL_GOAL_S, "challenge_s": CHALLENGE_GOAL_S,
                     "pipeline_vs_raw": RATIO_GOAL, "wall_vs_replay": REPLAY_GOAL},
           "runs": results, "failures": failures, "summary": summary}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "debate_embedded.json"
    path.write_text(json.dumps(out, indent=2))
    print(f"wrote {path}")
    return out


def report(quick: bool = True) -> list[dict]:
    """The benchmark report's rows (bench/run_all.py): one question in quick mode, three in full."""
    out = run(runs=1 if quick else 3)
    summary, runs = out["summary"], out["runs"]
    n = f"{len(runs)} debate{'s' if len(runs) != 1 else ''}" + (f", {summary['failed_runs']} failed"
                                                                 if summary["failed_runs"] else "")
    wall, challenge, ratio = summary["debate_seconds_mean"], summary["challenge_seconds_mean"], summary["replay_ratio"]
    tps = summary["ratio_vs_raw_grammar_mean"]
    calls = sum(r["replay"]["calls"] for r in runs)
    same = sum(r["replay"]["same_text"] for r in runs)
    return [
        {"figure": "Static debate wall, embedded model", "value": wall, "unit": "s", "goal": f"<= {WALL_GOAL_S:g} s",
         "met": wall <= WALL_GOAL_S,
         "note": f"mean of {n} ({out['model']}, {out['threads']} threads); the requirement's < {DEBATE_GOAL_S:g} s "
                 f"{'met' if wall < DEBATE_GOAL_S else 'missed'}"},
        {"figure": "Static debate wall / raw llama.cpp, same prompts and completions", "value": ratio, "unit": "x",
         "goal": f"<= {REPLAY_GOAL:g}", "met": ratio <= REPLAY_GOAL if ratio is not None else None,
         "note": f"debate {wall} s against {summary['replay_seconds_mean']} s for its calls sent again straight "
                 f"to llama.cpp, one at a time (means; {calls} calls in all, the same text in {same}/{calls}), "
                 "both in this run"},
        {"figure": "Pipeline tokens/s / raw llama.cpp tokens/s (pro's prompt, same grammar)", "value": tps,
         "unit": "x", "goal": f">= {RATIO_GOAL:g}", "met": tps >= RATIO_GOAL,
         "note": f"pipeline {summary['pipeline_tokens_per_s_mean']} tok/s (tokens / the agents' model seconds) "
                 "against llama.cpp decoding the pro's prompt with the same grammar; both in this run"},
        {"figure": "Challenge wall, embedded model", "value": challenge, "unit": "s",
         "goal": f"< {CHALLENGE_GOAL_S:g} s", "met": challenge < CHALLENGE_GOAL_S,
         "note": f"one challenge (question an assumption) after each debate, mean of {len(runs)} (required: < 10 s)"},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="debates to run (questions cycle); default 3")
    parser.add_argument("--threads", type=int, default=None, help="decoding threads; default: the provider's")
    args = parser.parse_args()
    try:
        run(args.runs, args.threads)
    except EveryRunFailed as exc:
        sys.exit(str(exc))


if __name__ == "__main__":
    main()
