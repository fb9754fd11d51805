"""One answer of the understanding check: the reasons a person knows for and against, their lean and confidence.

Reasons are short texts, one a line as typed (a leading bullet or number such as ``-``, ``*``, ``•`` or ``3.`` is
dropped; empty lines are skipped; a line repeated is kept once). The lean is a five-point scale from -2 (strongly
against) to 2 (strongly for); the confidence 0 to 100. Every refusal is an :class:`~clearside.errors.InputError`
naming the fix, in the dashboard's and the command line's words.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import InputError
from ...inputs import clean, over_limit, visible
from ...store.understanding import STAGES

MAX_REASONS = 15  # per side
MAX_REASON = 300  # characters a reason
MAX_TEXT = 20_000  # characters a box may hold at all (before it is split into lines)
LEANS = {-2: "strongly against", -1: "leaning against", 0: "undecided", 1: "leaning for", 2: "strongly for"}
STAGE_LABELS = {"before": "before", "after": "after", "retest": "at the re-test"}
SIDES = {"for": "reasons_for", "against": "reasons_against"}
_BULLET = re.compile(r"^\s*(?:[-*•·–—]+|\(?\d{1,2}[.)])\s*")


@dataclass(frozen=True)
class Answer:
    """One answer as the store keeps it (``body``) and the matcher reads it."""

    stage: str
    reasons_for: list[str] = field(default_factory=list)
    reasons_against: list[str] = field(default_factory=list)
    lean: int | None = None
    confidence: int | None = None

    def body(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if key != "stage"}

    @classmethod
    def of(cls, stage: str, body: dict[str, Any]) -> Answer:
        """An answer from the store's body (read back as written: it was checked on the way in)."""
        return cls(stage=stage, reasons_for=list(body.get("reasons_for") or []),
                   reasons_against=list(body.get("reasons_against") or []), lean=body.get("lean"),
                   confidence=body.get("confidence"))

    def reasons(self, side: str) -> list[str]:
        return self.reasons_for if side == "for" else self.reasons_against


def check_stage(stage: Any) -> str:
    if stage not in STAGES:
        raise InputError(f"Unknown stage {stage!r}: the understanding check has {', '.join(STAGES)}.")
    return stage


def reasons(text: Any, side: str) -> list[str]:
    """The reasons in a box's text, one a line; refused when too many or one too long (the message names which)."""
    if text is None:
        return []
    if isinstance(text, list | tuple):
        text = "\n".join(str(item) for item in text)
    if not isinstance(text, str):
        raise InputError(f"The reasons {side} must be text, one reason a line.")
    if len(text) > MAX_TEXT:
        raise InputError(f"The reasons {side} are {len(text):,} characters long; the limit is {MAX_TEXT:,}. "
                         f"Keep at most {MAX_REASONS} short reasons, one a line.")
    kept: list[str] = []
    for line in text.splitlines():
        reason = clean(_BULLET.sub("", line, count=1))
        if reason and visible(reason) and reason.casefold() not in (k.casefold() for k in kept):
            kept.append(reason)
    for number, reason in enumerate(kept, start=1):
        if problem := over_limit(reason, MAX_REASON, f"Reason {number} {side}"):
            raise InputError(f"{problem} Or split it into two lines: one reason a line.")
    if len(kept) > MAX_REASONS:
        raise InputError(f"You wrote {len(kept)} reasons {side}; the limit is {MAX_REASONS}. Keep the "
                         f"{MAX_REASONS} that matter most, or merge close ones into one line.")
    return kept


def lean(value: Any) -> int | None:
    """A lean from -2 to 2, or one of its words (``strongly against`` ... ``strongly for``); None: not given."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        words = value.strip().lower()
        named = {label: number for number, label in LEANS.items()} | {"for": 1, "against": -1}
        try:
            value = int(words)
        except ValueError:
            value = named.get(words.replace("-", " ").replace("_", " "))
    if isinstance(value, bool) or not isinstance(value, int) or value not in LEANS:
        raise InputError(f"The lean must be a whole number from -2 (strongly against) to 2 (strongly for), or one "
                         f"of: {', '.join(LEANS.values())}.")
    return value


def confidence(value: Any) -> int | None:
    """A confidence from 0 to 100 (per cent); None: not given."""
    if value is None or value == "":
        return None
    try:
        number = int(str(value).strip().rstrip("%"))
    except ValueError:
        number = -1
    if isinstance(value, bool) or not 0 <= number <= 100:
        raise InputError("The confidence must be a whole number from 0 to 100 (per cent sure).")
    return number


def answer(stage: Any, reasons_for: Any = None, reasons_against: Any = None, *, lean_value: Any = None,
           confidence_value: Any = None) -> Answer:
    """A checked answer. An answer with no reason, no lean and no confidence is refused: there is nothing to
    keep (a person who knows no reason yet says so by giving their lean or confidence)."""
    made = Answer(stage=check_stage(stage), reasons_for=reasons(reasons_for, "for"),
                  reasons_against=reasons(reasons_against, "against"), lean=lean(lean_value),
                  confidence=confidence(confidence_value))
    if not made.reasons_for and not made.reasons_against and made.lean is None and made.confidence is None:
        raise InputError("The answer is empty: write the reasons you know for or against (one a line), or give "
                         "your lean or confidence. Knowing no reason yet is an answer: give your lean then.")
    return made
