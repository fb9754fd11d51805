"""Perspectives mode (docs/design/perspectives.md): a clarification gate, rounds of expansion (A) and compression (B),
a synthesis."""

from .runner import KIND, PerspectivesRun, load
from .session import DEFAULT_ROUNDS, MAX_ROUNDS, MAX_SITUATION, MIN_ROUNDS, InvalidTransition, Session, allowed_next

__all__ = ["DEFAULT_ROUNDS", "KIND", "MAX_ROUNDS", "MAX_SITUATION", "MIN_ROUNDS", "InvalidTransition",
           "PerspectivesRun", "Session", "allowed_next", "load"]
