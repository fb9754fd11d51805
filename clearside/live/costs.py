"""Time and tokens per turn of a live debate, as the Timeline page, the Markdown download and
``live`` (its closing line; the JSON transcript has every turn's figures) show them. No model, no store."""

from __future__ import annotations

import math
from typing import Any

from .protocol import SPEAKER_LABELS
from .transcript import Transcript

COLUMNS = {"turn": "Turn", "speaker": "Speaker", "seconds": "Time (s)", "first_token_seconds": "First token (s)",
           "completion_tokens": "Tokens", "tokens_per_second": "Tokens/s"}


def rows(transcript: Transcript) -> list[dict[str, Any]]:
    """One row per finished turn: who spoke, the turn's wall time, its time to first token, its tokens and
    their rate (None where the turn recorded no time)."""
    out = []
    for turn in transcript.turns:
        rate = round(turn.completion_tokens / turn.seconds, 1) if turn.seconds and turn.completion_tokens else None
        out.append({"turn": turn.turn, "speaker": SPEAKER_LABELS.get(turn.speaker, turn.speaker),
                    "seconds": round(turn.seconds, 2), "first_token_seconds": round(turn.first_token_seconds, 2),
                    "completion_tokens": turn.completion_tokens, "tokens_per_second": rate})
    return out


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (``share`` in 0..1) of ``values``; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]


def summary(transcript: Transcript) -> dict[str, Any]:
    """Totals and the spread of time to first token over the turns that recorded one."""
    timed = [t for t in transcript.turns if t.seconds]
    first = [t.first_token_seconds for t in timed if t.first_token_seconds]
    return {"turns": len(transcript.turns), "timed_turns": len(timed),
            "seconds": round(sum(t.seconds for t in timed), 2),
            "completion_tokens": sum(t.completion_tokens for t in transcript.turns),
            "first_token_p50": _round(percentile(first, 0.5)), "first_token_p90": _round(percentile(first, 0.9)),
            "first_token_max": _round(max(first, default=None))}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def sentence(facts: dict[str, Any]) -> str:
    """The summary in words: ``41.2 s of model time over 9 turns, 1,830 tokens; time to first token: ...``."""
    text = (f"{facts['seconds']} s of model time over {facts['timed_turns']} turns, "
            f"{facts['completion_tokens']:,} tokens")
    if facts["first_token_p50"] is None:
        return f"{text}; no turn recorded its time to first token."
    return (f"{text}; time to first token: median {facts['first_token_p50']} s, 90th percentile "
            f"{facts['first_token_p90']} s, longest {facts['first_token_max']} s.")


def markdown(transcript: Transcript) -> list[str]:
    """The Markdown export's "Time and tokens" section (empty when no turn recorded a time)."""
    facts = summary(transcript)
    if not facts["timed_turns"]:
        return []
    lines = ["## Time and tokens", "", f"{sentence(facts)}", "",
             "| " + " | ".join(COLUMNS.values()) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join("" if row[k] is None else str(row[k]) for k in COLUMNS) + " |"
              for row in rows(transcript)]
    return [*lines, ""]
