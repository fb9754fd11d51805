"""Reference sets a debate is scored against: the flagship benchmark and the ArgKP dev propositions.

A reference names a proposition, short key points per side and, where it has
them, decision hinges; the flagship also carries a whole hand-structured v1
document. ``load`` takes ``flagship``, ``argkp-dev:N`` (N = 1..4) or the path of
a JSON file in the flagship's format (``document`` is optional there).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ...contract import validate_document
from ...errors import InputError
from ...inputs import read_json

HERE = Path(__file__).resolve().parent
FLAGSHIP = HERE / "flagship.json"
ARGKP = HERE / "argkp"


@dataclass(frozen=True)
class Reference:
    name: str
    title: str
    proposition: str
    key_points: dict[str, list[str]]  # "pro" and "con"
    decision_hinges: list[str] = field(default_factory=list)
    document: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "proposition": self.proposition,
                "key_points": self.key_points, "decision_hinges": self.decision_hinges}


def _from_data(data: Any, origin: str) -> Reference:
    if not isinstance(data, dict):
        raise InputError(f"{origin} is not a reference: expected a JSON object with proposition and key_points.")
    points = data.get("key_points")
    if not isinstance(data.get("proposition"), str) or not isinstance(points, dict) or not all(
            isinstance(points.get(side), list) and points[side] and all(isinstance(p, str) and p.strip()
                                                                       for p in points[side])
            for side in ("pro", "con")):
        raise InputError(f"{origin} is not a reference: it needs a 'proposition' string and 'key_points' with "
                         "non-empty 'pro' and 'con' lists of strings.")
    document = data.get("document")
    if document is not None:
        validate_document(document)
    return Reference(name=str(data.get("name") or Path(origin).stem), title=str(data.get("title") or origin),
                     proposition=data["proposition"], key_points={s: list(points[s]) for s in ("pro", "con")},
                     decision_hinges=[h for h in data.get("decision_hinges") or [] if isinstance(h, str)],
                     document=document)


@cache
def flagship() -> Reference:
    return _from_data(json.loads(FLAGSHIP.read_text(encoding="utf-8")), "flagship")


def _rows(name: str) -> list[dict[str, str]]:
    with (ARGKP / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@cache
def argkp_dev() -> tuple[Reference, ...]:
    """The four ArgKP dev propositions with their expert key points (stance 1 = pro, -1 = con)."""
    topics: dict[str, dict[str, list[str]]] = {}
    for row in _rows("key_points_dev.csv"):
        side = "pro" if row["stance"].strip() == "1" else "con"
        topics.setdefault(row["topic"], {"pro": [], "con": []})[side].append(row["key_point"])
    return tuple(Reference(name=f"argkp-dev:{i}", title=topic, proposition=topic, key_points=points)
                 for i, (topic, points) in enumerate(sorted(topics.items()), start=1))


def argkp_arguments(topic: str) -> dict[str, list[str]]:
    """The human arguments of one dev proposition, by side (for tests of the metrics' mechanics)."""
    sides: dict[str, list[str]] = {"pro": [], "con": []}
    for row in _rows("arguments_dev.csv"):
        if row["topic"] == topic:
            sides["pro" if row["stance"].strip() == "1" else "con"].append(row["argument"])
    return sides


NAMES = ("flagship", "argkp-dev:1", "argkp-dev:2", "argkp-dev:3", "argkp-dev:4")


def load(name: str) -> Reference:
    """A reference by name (see the module doc) or from a JSON file."""
    if name == "flagship":
        return flagship()
    if name.startswith("argkp-dev:"):
        index = name.split(":", 1)[1]
        refs = argkp_dev()
        if not index.isdigit() or not 1 <= int(index) <= len(refs):
            raise InputError(f"Unknown reference {name!r}: use argkp-dev:1 to argkp-dev:{len(refs)}.")
        return refs[int(index) - 1]
    if not Path(name).suffix == ".json" and not Path(name).exists():
        raise InputError(f"Unknown reference {name!r}: use flagship, argkp-dev:1..4 or a JSON file's path.")
    return _from_data(read_json(name, "reference"), name)
