"""Challenge checks: the response is about its target, and its classification fits its analysis.

The classification test is deliberately conservative: it objects only when the
analysis speaks plainly in one register (values, or evidence) and the label names
the other, so an honest "uncertain" is never second-guessed.
"""

from __future__ import annotations

import re
from typing import Any

from . import text as t
from .base import LEXICAL_ONLY, Embeddings, Finding

ON_TARGET = 0.25
VALUES = re.compile(r"\b(values?|moral(ity|ly)?|ethic(s|al|ally)?|fair(ness)?|unfair|justice|just|rights?|ought|"
                    r"priorit(y|ies|ize|ise)|trade-?offs?|principles?|beliefs?|dignity|duty|virtue|worth)\b", re.I)
EVIDENCE = re.compile(r"\b(data|evidence|stud(y|ies)|measure(d|ment|ments|s)?|statistics?|research|survey(s|ed)?|"
                      r"experiments?|trials?|records?|observed|empirical(ly)?|figures|rates?|percent(age)?)\b", re.I)


def check(data: dict[str, Any], *, target: str, embeddings: Embeddings = LEXICAL_ONLY) -> list[Finding]:
    findings: list[Finding] = []
    analysis = list(data.get("analysis", []))
    for i, item in enumerate(analysis):
        if problem := t.statement_problem(item, verb=True):
            findings.append(Finding("junk", ("analysis", i), f"analysis item {i + 1} {problem}", item))
    joined = " ".join(analysis)
    sims = embeddings.similarities(analysis, [target])
    about = (float(sims.max()) >= ON_TARGET) if sims is not None else bool(t.content(joined) & t.content(target))
    if analysis and not about:
        findings.append(Finding("off_target", ("analysis",), "the analysis is not about the challenged element "
                                f"{target!r}: analyse that element", joined[:200], "reask"))
    values, evidence = len(VALUES.findall(joined)), len(EVIDENCE.findall(joined))
    label = data.get("classification")
    if label == "factual" and values >= 2 and not evidence:
        findings.append(Finding("classification_mismatch", ("classification",), "the analysis turns on values, "
                                "not evidence: classify it values_dependent (or uncertain)", label, "reask"))
    elif label == "values_dependent" and evidence >= 2 and not values:
        findings.append(Finding("classification_mismatch", ("classification",), "the analysis turns on evidence, "
                                "not values: classify it factual (or uncertain)", label, "reask"))
    return findings
