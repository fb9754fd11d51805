"""What a study is made of, checked: a title, 1 to ``MAX_QUESTIONS`` questions, 2 or 3 arms among ``debate`` (the
full debate), ``single`` (the single-pass control) and ``sources`` (the participant reads only the files the creator
attached to the question), and the files of each question for the ``sources`` arm, read by
:mod:`clearside.sources.ingest` within its limits. Every refusal is an :class:`~clearside.errors.InputError` naming
the fix, and nothing is saved until all of it passes.

A study file (``python -m clearside study create --file study.json``)::

    {"title": "Pausing AI", "arms": ["debate", "single"],
     "questions": ["Should AI development be paused?", {"question": "...", "sources": ["notes/report.pdf"]}]}

Paths of sources are relative to the file's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...inputs import question as checked_question
from ...inputs import read_json
from ...sources.ingest import Source, read_sources
from ...store.studies import ARMS

MAX_QUESTIONS = 10
MAX_TITLE = 200
ARM_LABELS = {"debate": "full debate", "single": "single pass", "sources": "sources only"}
DEFAULT_ARMS = ("debate", "single")


@dataclass(frozen=True)
class Plan:
    """A checked study, not yet saved."""

    title: str
    questions: list[str]
    arms: list[str]
    sources: dict[int, list[Source]] = field(default_factory=dict)  # question number -> its files


def arms_of(values: Any) -> list[str]:
    """2 or 3 distinct arms, in ClearSide's order."""
    if isinstance(values, str):
        values = [v for v in values.replace(",", " ").split() if v]
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
        raise InputError(f"The arms must be a list of names among: {', '.join(ARMS)}.")
    unknown = [v for v in values if v not in ARMS]
    if unknown:
        raise InputError(f"Unknown arm {unknown[0][:40]!r}: choose among {', '.join(ARMS)} "
                         f"({', '.join(f'{a}: {label}' for a, label in ARM_LABELS.items())}).")
    chosen = [arm for arm in ARMS if arm in values]
    if len(chosen) < 2:
        raise InputError("A study compares arms: choose at least two of "
                         f"{', '.join(ARMS)} (for example debate and single).")
    return chosen


def questions_of(values: Any) -> list[str]:
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list | tuple) or not values:
        raise InputError("A study needs at least one question.")
    if len(values) > MAX_QUESTIONS:
        raise InputError(f"A study has at most {MAX_QUESTIONS} questions; this one has {len(values)}.")
    found = [checked_question(v, label=f"Question {n}") for n, v in enumerate(values, start=1)]
    for n, text in enumerate(found, start=1):
        if text.casefold() in (t.casefold() for t in found[:n - 1]):
            raise InputError(f"Question {n} repeats an earlier one: each question of a study must differ.")
    return found


def plan(title: Any, questions: Any, arms: Any = DEFAULT_ARMS,
         files: dict[int, list[tuple[str, bytes]]] | None = None) -> Plan:
    """A checked study; ``files``: each question's files (name, bytes) for the ``sources`` arm."""
    name = checked_question(title, label="The study's title", limit=MAX_TITLE)
    found, chosen, files = questions_of(questions), arms_of(arms), files or {}
    extra = [n for n, given in files.items() if given and not 1 <= n <= len(found)]
    if extra:
        raise InputError(f"Sources were given for question {extra[0]}, but the study has {len(found)} question(s).")
    if any(files.values()) and "sources" not in chosen:
        raise InputError("Files are shown only in the 'sources' arm: add that arm, or leave the files out.")
    sources = {n: read_sources(given) for n, given in files.items() if given}
    if "sources" in chosen:
        missing = [n for n in range(1, len(found) + 1) if not sources.get(n)]
        if missing:
            raise InputError(f"The 'sources' arm shows each question's files, and question {missing[0]} has none: "
                             "attach at least one file to every question, or drop the 'sources' arm.")
    return Plan(title=name, questions=found, arms=chosen, sources=sources)


def _question_entry(item: Any, number: int, folder: Path) -> tuple[Any, list[tuple[str, bytes]]]:
    if not isinstance(item, dict):
        return item, []
    paths = item.get("sources") or []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise InputError(f"questions[{number}].sources must be a list of file paths.")
    files = []
    for path in paths:
        full = folder / path
        try:
            files.append((full.name, full.read_bytes()))
        except OSError as exc:
            raise InputError(f"Cannot read question {number}'s source {path!r}: {exc.strerror or exc}.") from None
    return item.get("question"), files


def from_file(path: str) -> Plan:
    """A study file read strictly (JSON: ``title``, ``questions``, ``arms``)."""
    data = read_json(path, "study file")
    if not isinstance(data, dict):
        raise InputError(f"The study file {path} must hold an object with title, questions and arms.")
    unknown = sorted(set(data) - {"title", "questions", "arms"})
    if unknown:
        raise InputError(f"The study file has an unknown key {unknown[0][:40]!r}: use title, questions, arms.")
    items = data.get("questions")
    if not isinstance(items, list):
        raise InputError("The study file's questions must be a list (each a text, or an object with question and "
                         "sources).")
    folder = Path(path).parent
    read = [_question_entry(item, n, folder) for n, item in enumerate(items, start=1)]
    return plan(data.get("title"), [q for q, _ in read], data.get("arms", list(DEFAULT_ARMS)),
                {n: files for n, (_, files) in enumerate(read, start=1) if files})
