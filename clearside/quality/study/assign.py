"""Participants: the link's secrets and the balanced draw of a question and arm.

A study's participant link carries its id and a join key (``?study=<id>&join=<key>``); opening it mints a participant
token (``?study=<id>&p=<token>``), 128 random bits, which only that participant holds: the store keeps its hash, so
someone who reads the database cannot answer as them. No name is asked or kept.

The draw is the least-filled arm, then the least-filled question within it, ties broken at random: after any number
of joins the arms differ by at most one participant (and so do a question's arms, when the arms are even). The store
runs it with the study locked, so two participants joining at once see each other (the arms stay balanced).
"""

from __future__ import annotations

import hashlib
import random
import secrets

from ...store import Store
from ...store.studies import Cell, ParticipantRow

_random = random.SystemRandom()


def new_token() -> str:
    return secrets.token_hex(16)


def key_of(token: str) -> str:
    """What the store keeps of a participant's token: its hash (32 hex characters)."""
    return hashlib.sha256(f"clearside-participant:{token}".encode()).hexdigest()[:32]


def pick(counts: dict[Cell, int], rng: random.Random | None = None) -> Cell:
    """The least-filled arm, then its least-filled question, ties at random."""
    arms: dict[str, int] = {}
    questions: dict[int, int] = {}
    for (question, arm), count in counts.items():
        arms[arm] = arms.get(arm, 0) + count
        questions[question] = questions.get(question, 0) + count

    def load(cell: Cell) -> tuple[int, int, int]:
        return arms[cell[1]], counts[cell], questions[cell[0]]

    least = min(load(cell) for cell in counts)
    return (rng or _random).choice(sorted(cell for cell in counts if load(cell) == least))


def join(store: Store, study_id: str, join_key: str) -> tuple[str, ParticipantRow]:
    """A new participant of the study: (their token, for their link; their row with the question and arm drawn)."""
    token = new_token()
    return token, store.join_study(study_id, join_key, key_of(token), pick)
