"""The understanding check (docs/quality/understanding.md): did the user understand the issue better than when they
started? Before reading a debate, after, and at a later re-test, a person writes the reasons they know for and
against with their lean and confidence; their reasons are matched against the debate's arguments and hinges with the
metrics' key-point matcher, and counted ("argument repertoire", Cappella, Price & Nir 2002). Never a grade.

``answers``: an answer and its rules; ``match``: the matching; ``report``: saving, a debate's summary, the gains
across debates, the CSV.
"""

from __future__ import annotations

from .answers import LEANS, MAX_REASON, MAX_REASONS, STAGE_LABELS, Answer, answer
from .match import match
from .report import csv_rows, csv_text, gains, record, safe_cell, summary

__all__ = ["LEANS", "MAX_REASON", "MAX_REASONS", "STAGE_LABELS", "Answer", "answer", "csv_rows", "csv_text", "gains",
           "match", "record", "safe_cell", "summary"]
