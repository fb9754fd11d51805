"""Study mode (docs/quality/study.md): evidence for teams. A study is a set of questions and arms (``debate``: the
full debate, ``single``: the single-pass control, ``sources``: only the creator's files); a participant link draws
each participant a question and an arm at random, balanced, and runs the understanding check before and after
reading and at a delayed re-test; the creator alone sees the gain per arm with its interval, the difference between
arms and the participants a given effect needs.

``spec``: a study checked; ``generate``: saved, its documents made once on the durable runtime; ``assign``: the
link's secrets and the balanced draw; ``flow``: a participant's steps; ``results`` and ``stats``: the figures.
"""

from __future__ import annotations

from .assign import key_of, pick
from .flow import STEPS, answer, join, material, where
from .generate import create, queue, status
from .results import REFUSED, csv_rows, csv_text, owned, results
from .spec import ARM_LABELS, MAX_QUESTIONS, Plan, from_file, plan
from .stats import cohen_d, difference, per_arm

__all__ = ["ARM_LABELS", "MAX_QUESTIONS", "REFUSED", "STEPS", "Plan", "answer", "cohen_d", "create", "csv_rows",
           "csv_text", "difference", "from_file", "join", "key_of", "material", "owned", "per_arm", "pick", "plan",
           "queue", "results", "status", "where"]
