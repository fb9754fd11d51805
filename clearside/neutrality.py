"""Neutrality lexicon (docs/design/requirements.md#m9): verdict and recommendation language in moderator text.

*Hard* hits (a winner, a verdict, a recommendation) are violations; *soft* hits
(certainty intensifiers, dismissive wording) are warnings. A hit inside speech
attributed to a side ("Pro argues that governments should ...") or inside an open
question ("... hinges on whether regulators should ...") reports that side's
position, so it is not counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_I = re.IGNORECASE
HARD = [(name, re.compile(pattern, _I)) for name, pattern in (
    ("verdict", r"\bon balance\b"),
    ("verdict", r"\b(makes?|has|have|presents?|offers?) the (stronger|more compelling|more convincing|better|"
                r"more persuasive|weaker) (case|argument|position)s?\b"),
    ("verdict", r"\b(wins?|won|winning) (the|this) (debate|argument)\b"),
    ("verdict", r"\b(is|are) the (clear )?winners?\b"),
    ("verdict", r"\bthe (weight|balance|preponderance) of (the )?evidence (favou?rs|supports|points)\b"),
    # "the answer is a pause" is a verdict; "the answer is still unclear" says that there is none yet
    ("verdict", r"\bthe (right |correct )?(answer|verdict|conclusion) is\b(?!\s+(still |yet |as yet )?"
                r"(unclear|unknown|uncertain|open|unsettled|contested|disputed|debated|"
                r"not (yet )?(clear|known|settled|obvious))\b)"),
    ("verdict", r"\b(pro|con|for|against)(['’]s)?( side| case| advocate)?( arguments?)? (is|are|was|were) "
                r"(stronger|weaker|more convincing|more persuasive|more compelling|better|right|correct)\b"),
    ("verdict", r"\b(stronger|better|weaker) side\b"),
    ("recommendation", r"\b(i|we) (would )?(recommend|suggest|conclude|believe|advise|urge)\b"),
    ("recommendation", r"\bin my (view|opinion)\b"),
    ("recommendation", r"\b(policymakers|policy makers|you|society|governments?|lawmakers|legislators|regulators|"
                       r"congress|the (us|u\.s\.|country|state|company|team|user)) (should|must|ought to)\b"),
    ("recommendation", r"\bthe best (course of action|option|choice|path) is\b"),
    ("recommendation", r"\b(it is|it's) (advisable|recommended|wise|best) to\b"),
)]
SOFT = [(name, re.compile(pattern, _I)) for name, pattern in (
    ("certainty", r"\b(clearly|obviously|undeniably|certainly|definitely|unquestionably|indisputably)\b"),
    ("certainty", r"\b(it is clear that|proves that|there is no doubt)\b"),
    ("dismissive", r"\b(weak|flawed|unconvincing|naive|absurd|baseless|misguided) (argument|case|point|reasoning|"
                   r"claim)s?\b"),
)]
_ATTRIBUTION = re.compile(
    r"\b(pro|con|for|against|the (for|against|pro|con) side|advocates?|supporters|opponents|critics|proponents|"
    r"one side|the other side|both sides|each side|either side|they)\b[^.;!?]*?\b(argues?|argued|claims?|"
    r"claimed|says|said|contends?|believes?|holds?|maintains?|assumes?|suggests?|insists?|thinks?|proposes?|"
    r"asserts?|favou?rs?|wants?|warns?|counters?)\b", _I)
_QUESTION = re.compile(r"\b(whether|if)\b", _I)
# a label that opens with a recommendation's subject and modal ("Government should cap rents"): the open question
# it names is "Whether government should cap rents"; a proper name (Congress, the US) keeps its capital
_OPENING_ADVICE = re.compile(r"(policymakers|policy makers|society|governments?|lawmakers|legislators|regulators|"
                             r"congress|the (?:us|u\.s\.|country|state|company|team|user)) (?:should|must|ought to)\b",
                             _I)
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")


@dataclass(frozen=True)
class Hit:
    severity: str  # hard or soft
    kind: str  # verdict, recommendation, certainty, dismissive
    phrase: str
    sentence: str

    def as_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "kind": self.kind, "phrase": self.phrase, "text": self.sentence}


def _excused(sentence: str, start: int) -> bool:
    before = sentence[:start]
    return bool(_ATTRIBUTION.search(before) or _QUESTION.search(before) or sentence.rstrip().endswith("?"))


def scan(text: str) -> list[Hit]:
    """Every neutrality hit in ``text``, hard ones first; attributed or questioned hits are skipped."""
    hits: list[Hit] = []
    for match in _SENTENCE.finditer(text or ""):
        sentence = match.group().strip()
        if not sentence:
            continue
        for severity, patterns in (("hard", HARD), ("soft", SOFT)):
            for kind, pattern in patterns:
                for found in pattern.finditer(sentence):
                    if severity == "hard" and _excused(sentence, found.start()):
                        continue
                    hits.append(Hit(severity, kind, found.group(), sentence))
    return sorted(hits, key=lambda hit: hit.severity != "hard")


def violations(text: str) -> list[Hit]:
    return [hit for hit in scan(text) if hit.severity == "hard"]


def open_question(label: str) -> str | None:
    """A short label (a disagreement's topic, a root cause) that opens with a recommendation, as the open question
    it names: "Government should cap rents." becomes "Whether government should cap rents"; None when the label does
    not open so, or the question would still hold a verdict."""
    text = (label or "").strip()
    opening = _OPENING_ADVICE.match(text)
    if opening is None:
        return None
    subject = opening.group(1)
    if subject.lower() != "congress":
        subject = subject[0].lower() + subject[1:]
    question = f"Whether {subject}{text[opening.end(1):]}".rstrip(" .!")
    return None if violations(question) else question
