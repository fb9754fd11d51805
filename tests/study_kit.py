"""A study ready for participants without any model: its debate and single-pass arms hold the flagship reference
debate (a finished debate of the store), its sources arm a short text file (tests of clearside/quality/study/)."""

from __future__ import annotations

from typing import Any

from clearside.quality import study
from clearside.quality.references import flagship
from clearside.store import NewDebate

NOTES = (b"Data centres use huge amounts of electricity and water. Laws cannot keep up with how fast AI is moving. "
         b"Pauses tend to become permanent.")


def plan(arms: tuple[str, ...] = ("debate", "sources"), questions: int = 1) -> study.Plan:
    texts = [flagship().proposition, *(f"Should question {n} be debated?" for n in range(2, questions + 1))]
    files = {n: [(f"notes{n}.txt", NOTES)] for n in range(1, questions + 1)} if "sources" in arms else None
    return study.plan("Pausing AI data centres", texts, list(arms), files)


def ready(store: Any, arms: tuple[str, ...] = ("debate", "sources"), *, owner: str | None = None,
          questions: int = 1) -> Any:
    """A saved study whose model-written arms hold the flagship debate (as if generated)."""
    made = study.create(store, plan(arms, questions), owner=owner, provider="scripted")
    doc = flagship().document
    for item in store.study_items(made.id):
        if item.arm != "sources":
            debate = store.create(NewDebate("static", doc["proposition"]["normalized_question"], provider="scripted",
                                            model="m", document=doc, status="done"))
            store.set_study_item_debate(made.id, item.question, item.arm, debate)
    return made
