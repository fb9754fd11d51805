"""What a check reports, the embeddings checks may use, and how findings are repaired or re-asked.

A :class:`Finding` names its check, where it is (a path into the agent's output),
the message the model gets on a re-ask, and the repair that is safe: ``drop`` the
item (when what remains still meets the contract's minimum), ``replace`` it with
text the user wrote, or none (``reask``). :func:`repair` applies what it can and
says what must go back to the model.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..errors import ConfigError
from . import cuts
from . import substance as s
from . import text as t

Repair = Literal["drop", "replace", "reask"]
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    check: str
    path: Path  # ("arguments", 2, "claim"); ("context", "geography")
    message: str  # what is wrong and what to do, as the model reads it on a re-ask
    text: str | None = None
    repair: Repair = "drop"
    replacement: Any = None  # with repair="replace" or final="replace"; on a drop, what stays where the list is at
    # its floor (a string marked as cut)
    final: Repair | None = None  # what a "reask" finding becomes on the last attempt (None: it stays a failure)
    optional: bool = False  # the path is an optional key: a drop removes that key, not the list item holding it

    @property
    def where(self) -> str:
        return "/".join(map(str, self.path))

    @property
    def target(self) -> Path:
        """What a drop removes: a list item (``("arguments", 2)``) or an optional key (``("context", "x")``)."""
        if not self.optional and len(self.path) >= 2 and isinstance(self.path[1], int):
            return self.path[:2]
        return self.path


class Embeddings:
    """Sentence similarity for the checks, on the one MiniLM the metrics load (once per process).

    Off when ``CLEARSIDE_SEMANTIC_CHECKS=0`` or the model package is missing; the
    checks then use their lexical measures alone, and the quality record says so.
    """

    def __init__(self, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = os.environ.get("CLEARSIDE_SEMANTIC_CHECKS", "1").strip() not in {"0", "false", "no", "off"}
        self.enabled = enabled

    def warm(self) -> None:
        """Load the model now (e.g. on a side thread while the first agent generates)."""
        if self.enabled:
            self.vectors(["warm"])

    def vectors(self, texts: Sequence[str]) -> np.ndarray | None:
        if not self.enabled:
            return None
        from .. import embed

        try:
            return embed.encode(list(texts))
        except ConfigError:
            self.enabled = False
            return None

    def similarities(self, texts: Sequence[str], anchors: Sequence[str]) -> np.ndarray | None:
        """Cosine of every text (rows) to every anchor (columns), or None when off."""
        if not texts or not anchors:
            return None
        vectors = self.vectors([*texts, *anchors])
        if vectors is None:
            return None
        return vectors[: len(texts)] @ vectors[len(texts):].T


LEXICAL_ONLY = Embeddings(enabled=False)
# Below this cosine to the question (the user's or the normalized one) a summary item or a moderator statement is
# about something else, whatever it shares with the arguments: an off-topic argument or assumption would vouch for a
# sentence on its own topic ("This case is about ethics." 0.02 in a debate on a job abroad, beside arguments about
# ethics). Assumptions and uncertainties are more indirect: the arguments alone judge them (clearside.checks.sides).
# Calibrated 2026-11-29 on every sentence of the flagship and of the contract's example, so that neither loses one:
# the least reach 0.035 ("Team adaptation time is variable", an uncertainty) and 0.043 (a label, "Speed of
# regulation"); the embedded model's strays in bench/reader.py's debates -0.02 to 0.02.
QUESTION_FLOOR = 0.03


@dataclass
class Outcome:
    """The reply after repairs, what was done, and what must go back to the model (empty: accepted)."""

    data: dict[str, Any]
    done: list[tuple[Finding, str]]  # (finding, "dropped" | "replaced")
    reask: list[Finding]


def value_at(data: Any, path: Path) -> Any:
    """The value at ``path`` (keys and indexes) in ``data``; KeyError, IndexError or TypeError when it is not there."""
    for key in path:
        data = data[key]
    return data


def repair(data: dict[str, Any], findings: list[Finding], floors: dict[str, int], *,
           last_attempt: bool) -> Outcome:
    """Apply every safe repair; ``floors`` are the contract's minimum item counts per list.

    A drop that would leave a list under its floor is not made: that finding goes back
    to the model. On the last attempt, a ``reask`` finding with a ``final`` repair (the
    user's own text as a replacement, or dropping a surplus item) gets that repair instead.
    """
    data = copy.deepcopy(data)
    done: list[tuple[Finding, str]] = []
    reask: list[Finding] = []
    drops: dict[Path, list[Finding]] = {}
    for finding in findings:
        action = finding.final if finding.repair == "reask" and last_attempt and finding.final else finding.repair
        if action == "replace":
            parent = value_at(data, finding.path[:-1])
            parent[finding.path[-1]] = finding.replacement
            done.append((finding, "replaced"))
        elif action == "drop":
            drops.setdefault(finding.target, []).append(finding)
        else:
            reask.append(finding)
    lists: dict[Path, list[int]] = {}
    for target in drops:
        if isinstance(target[-1], int):
            lists.setdefault(target[:-1], []).append(target[-1])
        else:
            value_at(data, target[:-1]).pop(target[-1], None)  # an optional key
            done += [(f, "dropped") for f in drops[target]]
    for where, indexes in lists.items():
        floor = floors.get("/".join(map(str, where)), 1)
        outcome = _drop_items(data, where, {i: drops[(*where, i)] for i in sorted(set(indexes))}, floor)
        done += outcome.done
        reask += outcome.reask
    return Outcome(data, done, reask)


def _drop_items(data: dict[str, Any], where: Path, flagged: dict[int, list[Finding]], floor: int) -> Outcome:
    """Drop the flagged items of the list at ``where`` (in place) while at least ``floor`` items remain. Where the
    floor needs some of them, items whose every finding carries a replacement stay, replaced (a string marked as
    cut), as few as the floor needs; if those are not enough, the other flagged items go back to the model."""
    need = floor - (len(value_at(data, where)) - len(flagged))  # flagged items the floor needs kept
    standing = [i for i, found in flagged.items() if all(f.replacement is not None for f in found)][:max(need, 0)]
    done: list[tuple[Finding, str]] = []
    for index in standing:
        for finding in flagged[index]:
            value_at(data, finding.path[:-1])[finding.path[-1]] = finding.replacement
            done.append((finding, "replaced"))
    go = {i: found for i, found in flagged.items() if i not in standing}
    if len(standing) < need:
        return Outcome(data, done, [f for found in go.values() for f in found])
    items = value_at(data, where)
    for index in sorted(go, reverse=True):
        del items[index]
    return Outcome(data, done + [(f, "dropped") for found in go.values() for f in found], [])


def garbage(path: tuple, label: str, text: str, *, whole: bool = True) -> Finding | None:
    """What a reader calls garbage in one string: codes, number runs, a sentence cut mid-phrase, or nothing said.

    A cut string is ended at its last complete sentence or clause when that is still a statement, else after its
    last word where it reads whole (repaired as "replaced", which the dashboard calls "ended early"); else the item
    goes (or, under the floor, is re-asked).
    ``whole=False``: the string may not be shortened (a decision hinge must stay a question)."""
    for name, test in (("code_soup", s.code_soup), ("number_soup", s.number_soup)):
        if problem := test(text):
            return Finding(name, path, f"{label} {problem}: write plain words", text)
    if t.junk(text):
        return None  # the junk check names what it is (a field name, gibberish...)
    if problem := cuts.cut_problem(text):
        if problem == cuts.RUNS_ON and whole and (ended := capped(path, text, problem)) is not None:
            return ended  # ended for the writer, as if by a length cap: ended early, else it goes (marked at a floor)
        message = f"{label} {problem}: write one complete sentence that fits its length limit"
        if whole and (shorter := cuts.whole_part(text) or cuts.ended_at_word(text)):
            return Finding("cut_sentence", path, message, text, "replace", shorter)
        return Finding("cut_sentence", path, message, text)
    if problem := s.empty_statement(text):
        return Finding("empty_claim", path, f"{label} {problem}: state the point itself", text)
    return None


def capped(path: tuple, text: str, problem: str = "ran into its length limit") -> Finding | None:
    """A string the decoder's length cap ended (see :func:`clearside.enforce.capped_strings`), ended at its last
    complete sentence or clause where that is still a statement, else after its last word where it still reads whole
    (:func:`clearside.checks.cuts.ended_at_word`): "ended early". Else a list's item goes while the
    list keeps its floor, and otherwise stays marked as cut where it stops ("... requires careful…": a fragment is
    never shown as a sentence); it is never re-asked. A long sentence the writer closed without a stop is treated
    the same (``problem``: :data:`clearside.checks.cuts.RUNS_ON`). None for a question (never shortened into a
    statement) and for a string that stops on a word needing more (left to :func:`garbage`). Measured on the
    embedded model: a small model writes a hinge or a label up to its cap on every attempt, so re-asking what cannot
    be ended early failed whole debates (5 of 7 on bench/reader.py's questions)."""
    if text.rstrip().endswith("?"):
        return None
    shorter = cuts.whole_part(text) or cuts.ended_at_word(text)
    if not shorter:
        shorter = text.rstrip().rstrip(" ,;:-–—") + "…"
        if cuts.cut_problem(shorter):
            return None
    label = " ".join(str(part + 1) if isinstance(part, int) else str(part).replace("_", " ") for part in path)
    message = f"{label} {problem}: write one complete, shorter sentence"
    if shorter.endswith("…") and len(path) >= 2 and isinstance(path[1], int):  # a list's item: it goes, while the
        return Finding("cut_sentence", path, message, text, "drop", shorter)   # list keeps its floor
    return Finding("cut_sentence", path, message, text, "replace", shorter)
