"""Embedded-provider latency: full debates, one challenge each, and pipeline vs raw llama.cpp decoding.

For each of N fixed questions (``--runs``, default 3) it runs a full debate on the
embedded provider (the in-process GGUF), then one challenge on the result, and
reports the wall time, per-agent completion tokens / seconds / attempts, and the
pipeline's tokens per second (sum of completion tokens / sum of agent seconds).
It then decodes the pro agent's own prompt RAW on the same shared ``Llama`` (same
model, same threads) twice: (a) unconstrained and (b) with the same grammar the
pipeline uses (``json_object`` + ``compact(SIDE_WIRE)``), timing decoding only
(first token to last). Goals: debate < 30 s (NFR-101), challenge < 10 s (NFR-104),
pipeline tokens/s >= 0.85 x raw tokens/s.

Run from the repository root:  python bench/debate_embedded.py [--runs 3] [--threads N]
Writes bench/results/debate_embedded.json. Results depend on machine load, which is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clearside import agents  # noqa: E402
from clearside.engine import DebateRun, Engine  # noqa: E402
from clearside.errors import ClearSideError  # noqa: E402
from clearside.providers.embedded import EmbeddedProvider, compact, load_llama, on_llama_thread  # noqa: E402

QUESTIONS = [
    "Should the United States impose a temporary moratorium on new large-scale AI data centers?",
    "Build or buy our feature-flag service?",
    "Leave my job for a startup?",
]
DEBATE_GOAL_S, CHALLENGE_GOAL_S, RATIO_GOAL = 30.0, 10.0, 0.85
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


def one_run(engine: Engine, provider: EmbeddedProvider, question: str) -> dict:
    run = DebateRun.from_input(question)
    started = time.perf_counter()
    document = engine.run(run)
    debate_s = time.perf_counter() - started

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
    print(f"  pipeline {result['pipeline_tokens_per_s']:.1f} tok/s (tokens / agent seconds; "
          f"{result['wall_tokens_per_s']:.1f} tok/s over the debate's wall time; "
          f"{result['pipeline_decode_tokens_per_s']:.1f} tok/s decoding only)")
    for kind, raw in result["raw"].items():
        ratio = result["ratio_vs_raw"][kind]
        print(f"  raw {kind:<13} {raw['tokens']:>4} tokens, decoding {raw['tokens_per_s']:5.1f} tok/s -> "
              f"pipeline/raw {ratio} (goal >= {RATIO_GOAL}: {'ok' if ratio and ratio >= RATIO_GOAL else 'MISSED'}; "
              f"by wall time {result['wall_ratio_vs_raw'][kind]}; decoding only "
              f"{result['decode_ratio_vs_raw'][kind]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="debates to run (questions cycle); default 3")
    parser.add_argument("--threads", type=int, default=None, help="decoding threads; default: the provider's")
    args = parser.parse_args()

    before = machine()
    print(f"load before: {before['loadavg']} on {before['cpu_count']} CPUs")
    provider = EmbeddedProvider(n_threads=args.threads)
    load_started = time.perf_counter()
    load_llama(provider.path, provider.n_ctx, provider.n_threads)
    load_s = time.perf_counter() - load_started
    print(f"model {provider.path.name}, {provider.n_threads} threads, loaded in {load_s:.1f} s")
    engine = Engine(provider, retries=2)

    results, failures = [], []
    for i in range(args.runs):
        question = QUESTIONS[i % len(QUESTIONS)]
        try:
            results.append(one_run(engine, provider, question))
            show(results[-1])
        except ClearSideError as exc:  # a schema failure after every re-ask is a result too
            failures.append({"question": question, "error": str(exc)})
            print(f"\n== {question}\n  FAILED: {exc}")
    if not results:
        sys.exit("every run failed")

    def mean(key: str) -> float:
        return round(sum(r[key] for r in results) / len(results), 2)

    summary = {"debate_seconds_mean": mean("debate_seconds"), "challenge_seconds_mean": mean("challenge_seconds"),
               "pipeline_tokens_per_s_mean": mean("pipeline_tokens_per_s"),
               "debates_within_goal": sum(r["debate_ok"] for r in results),
               "challenges_within_goal": sum(r["challenge_ok"] for r in results), "failed_runs": len(failures)}
    after = machine()
    print(f"\nmean debate {summary['debate_seconds_mean']} s, mean challenge {summary['challenge_seconds_mean']} s, "
          f"{summary['debates_within_goal']}/{len(results)} debates and "
          f"{summary['challenges_within_goal']}/{len(results)} challenges within goal")
    print(f"load after: {after['loadavg']} on {after['cpu_count']} CPUs")

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "debate_embedded.json"
    out.write_text(json.dumps({"model": provider.path.name, "threads": provider.n_threads,
                               "load_seconds": round(load_s, 2), "machine_before": before, "machine_after": after,
                               "goals": {"debate_s": DEBATE_GOAL_S, "challenge_s": CHALLENGE_GOAL_S,
                                         "pipeline_vs_raw": RATIO_GOAL},
                               "runs": results, "failures": failures, "summary": summary}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
