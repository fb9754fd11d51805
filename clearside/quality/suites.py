"""Suites of cases a regression batch debates: the built-ins (flagship, argkp-dev) and the user's own files.

A suite file is YAML (``.yaml``/``.yml``) or JSON Lines (``.jsonl``). YAML holds a mapping with ``cases`` (and an
optional ``name`` and ``description``) or just the list of cases; JSONL holds one case per line (blank lines are
skipped) and takes its name from the file's stem. A case::

    id: ai-pause                     # letters, digits, . _ : -; unique in the suite; runs are paired by it
    proposition: Should the US pause new AI data centers?
    title: AI data-center pause      # optional
    context: {geography: US, timeframe: next 5 years, domain: energy policy}   # optional, each field optional
    key_points: {pro: [...], con: [...]}   # optional; coverage and stance are scored against them
    decision_hinges: [...]           # optional; hinge coverage is scored against them (needs key_points)
    reference: {...}                 # optional: a ClearSide v1 document (or, in YAML, a JSON file's path
                                     # relative to the suite); without key_points its claims become them

Loading checks every case (pydantic) and refuses a malformed suite with an ``InputError`` naming the file, the
line and the reason, and how to fix it. Nothing here runs a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import inputs
from ..contract import validate_document
from ..errors import InputError
from . import references
from .references import Reference

BUILTIN = ("flagship", "argkp-dev")
RESERVED = (*BUILTIN, "compare")  # the names the store already files runs under
ID = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}"
NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}"
MAX_BYTES = 20 * 1024 * 1024
EXTENSIONS = (".yaml", ".yml", ".jsonl")


class Context(BaseModel):
    """What the debate is about beyond its proposition, as the Debate page's context fields."""

    model_config = ConfigDict(extra="forbid")
    geography: str | None = None
    timeframe: str | None = None
    domain: str | None = None

    @field_validator("geography", "timeframe", "domain")
    @classmethod
    def _field(cls, value: str | None, info: Any) -> str | None:
        return inputs.context_field(info.field_name, value)


class KeyPoints(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pro: list[str] = Field(min_length=1)
    con: list[str] = Field(min_length=1)

    @field_validator("pro", "con")
    @classmethod
    def _points(cls, value: list[str]) -> list[str]:
        if any(not point.strip() for point in value):
            raise ValueError("a key point is blank: write it out or drop it")
        return [point.strip() for point in value]


class Case(BaseModel):
    """One case of a suite: what a regression batch debates and scores."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=f"^{ID}$")
    proposition: str
    title: str | None = None
    context: Context | None = None
    key_points: KeyPoints | None = None
    decision_hinges: list[str] = Field(default_factory=list)
    reference: dict[str, Any] | None = None

    @field_validator("proposition")
    @classmethod
    def _proposition(cls, value: str) -> str:
        return inputs.question(value, label="The proposition")

    @field_validator("reference")
    @classmethod
    def _reference(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            validate_document(value)  # InputError (a ValueError) names what breaks the v1 schema
        return value

    @model_validator(mode="after")
    def _hinges_need_points(self) -> Case:
        if self.decision_hinges and self.key_points is None and self.reference is None:
            raise ValueError("decision_hinges are scored with key points: add key_points (or a reference debate)")
        return self

    @property
    def name(self) -> str:
        """The id, under the name the runs' ``item`` and the reports use."""
        return self.id

    def points(self) -> dict[str, list[str]] | None:
        """Key points per side: the case's own, else the reference debate's claims, else none."""
        if self.key_points is not None:
            return {"pro": list(self.key_points.pro), "con": list(self.key_points.con)}
        if self.reference is not None:
            return {side: [a["claim"] for a in self.reference[side]["arguments"]] for side in ("pro", "con")}
        return None

    def scoring_reference(self) -> Reference | None:
        """What its debates are scored against (coverage, stance, hinges), or ``None`` when it has no key points."""
        points = self.points()
        if points is None:
            return None
        return Reference(name=self.id, title=self.title or self.proposition, proposition=self.proposition,
                         key_points=points, decision_hinges=list(self.decision_hinges), document=self.reference)

    def context_fields(self) -> dict[str, str]:
        return {k: v for k, v in (self.context.model_dump() if self.context else {}).items() if v}

    @classmethod
    def from_reference(cls, ref: Reference) -> Case:
        return cls(id=ref.name, proposition=ref.proposition, title=ref.title,
                   key_points=KeyPoints(**ref.key_points), decision_hinges=list(ref.decision_hinges),
                   reference=ref.document)


class Suite(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    description: str = ""
    source: str  # "built-in" or the file's path
    cases: tuple[Case, ...]

    @property
    def builtin(self) -> bool:
        return self.source == "built-in"

    def summary(self) -> dict[str, Any]:
        """What ``suite validate`` prints: the counts a reader checks at a glance."""
        return {"name": self.name, "source": self.source, "cases": len(self.cases),
                "ids": [c.id for c in self.cases],
                "with_key_points": sum(c.key_points is not None for c in self.cases),
                "with_reference": sum(c.reference is not None for c in self.cases),
                "with_context": sum(c.context is not None for c in self.cases),
                "with_hinges": sum(bool(c.decision_hinges) for c in self.cases),
                "scored_for_coverage": sum(c.points() is not None for c in self.cases)}


def builtin(name: str) -> Suite:
    if name == "flagship":
        refs: tuple[Reference, ...] = (references.flagship(),)
    elif name == "argkp-dev":
        refs = references.argkp_dev()
    else:
        raise InputError(f"Unknown suite {name!r}: use one of {', '.join(BUILTIN)} or a suite file's path "
                         f"({', '.join(EXTENSIONS)}).")
    return Suite(name=name, source="built-in", cases=tuple(Case.from_reference(r) for r in refs))


def resolve(name_or_path: str) -> Suite:
    """A built-in suite by name, else the suite file at that path."""
    if name_or_path in BUILTIN:
        return builtin(name_or_path)
    if Path(name_or_path).suffix.lower() in EXTENSIONS or Path(name_or_path).exists():
        return load(name_or_path)
    return builtin(name_or_path)  # refused with the names and the file types


# -- files --------------------------------------------------------------------------------------------------------

class _Refusal(Exception):
    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason)
        self.line, self.reason = line, reason


def load(path: str | Path) -> Suite:
    """The suite in ``path``; ``InputError`` with the line and the reason when it is malformed."""
    path = Path(path)
    fix = f"fix it and check again with `python -m clearside suite validate {path}`"
    if path.suffix.lower() not in EXTENSIONS:
        raise InputError(f"{path} is not a suite file: name it .yaml, .yml or .jsonl (YAML or JSON Lines).")
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"{path} is over {MAX_BYTES // 1024 // 1024} MB: split it into smaller suites.")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"No suite file {path}: check the path.") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text: save it as UTF-8.") from None
    except OSError as exc:
        raise InputError(f"Cannot read the suite file {path}: {exc.strerror or exc}.") from None
    try:
        if path.suffix.lower() == ".jsonl":
            name, description, raw = _stem(path), "", list(_jsonl(text))
        else:
            name, description, raw = _yaml(text, path)
        cases = _cases(raw, path)
    except _Refusal as exc:
        where = f"{path} line {exc.line}" if exc.line else str(path)
        raise InputError(f"{where}: {exc.reason}; {fix}.") from None
    except RecursionError:  # YAML or a JSON line nested a thousand levels deep
        raise InputError(f"{path}: it is nested too deeply to be a suite (a case is a few levels deep); "
                         f"{fix}.") from None
    if not re.fullmatch(NAME, name):
        raise InputError(f"{path}: the suite's name {name!r} may use only letters, digits, '.', '_' and '-' "
                         f"(60 at most); {fix}.")
    if name in RESERVED:
        raise InputError(f"{path}: the name {name!r} is a built-in suite's; give the suite a name of its own "
                         f"(`name:` in YAML, the file's name for JSONL).")
    return Suite(name=name, description=description, source=str(path), cases=tuple(cases))


def _stem(path: Path) -> str:
    return path.stem


def _jsonl(text: str) -> Iterator[tuple[int, Any, Any]]:
    """(line, case data, None): one JSON object per non-blank line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _Refusal(number, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
        yield number, data, None


MAX_YAML_VALUES = 1_000_000


def _expanded_size(root: yaml.Node) -> int:
    """How many values the YAML holds with every alias expanded, counted up to just past MAX_YAML_VALUES."""
    count, stack = 0, [root]
    while stack and count <= MAX_YAML_VALUES:
        node = stack.pop()
        count += 1
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
    return count


def _yaml(text: str, path: Path) -> tuple[str, str, list[tuple[int, Any, Any]]]:
    """The name, the description and (line, case data, case node) per case of a YAML suite."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _Refusal(mark.line + 1 if mark else None, f"not valid YAML ({problem})") from None
    if root is None:
        raise _Refusal(None, "it is empty: list the cases under `cases:`")
    if _expanded_size(root) > MAX_YAML_VALUES:  # a "billion laughs": aliases of aliases, each repeating the last
        raise _Refusal(None, f"it expands to more than {MAX_YAML_VALUES:,} values (YAML aliases, *name, repeat what "
                             "they name): write the cases out without nested aliases")
    name, description = path.stem, ""
    if isinstance(data, dict):
        extra = sorted(set(map(str, data)) - {"name", "description", "cases"})
        if extra:
            raise _Refusal(_key_line(root, extra[0]), f"unknown top-level key {extra[0]!r}: a suite has name, "
                                                      "description and cases")
        if "cases" not in data:
            raise _Refusal(root.start_mark.line + 1, "no `cases:`: list the cases under it")
        if data.get("name") is not None:
            if not isinstance(data["name"], str):
                raise _Refusal(_key_line(root, "name"), "name must be text")
            name = data["name"].strip()
        if not isinstance(data.get("description") or "", str):
            raise _Refusal(_key_line(root, "description"), "description must be text")
        description = str(data.get("description") or "")
        items, node = data["cases"], _value(root, "cases")
    else:
        items, node = data, root
    if not isinstance(items, list) or not isinstance(node, yaml.SequenceNode):
        raise _Refusal(node.start_mark.line + 1 if node is not None else None,
                       "cases must be a list (each case starts with `- id: ...`)")
    return name, description, [(child.start_mark.line + 1, item, child)
                               for item, child in zip(items, node.value, strict=True)]


def _value(mapping: Any, key: str) -> Any:
    if isinstance(mapping, yaml.MappingNode):
        for k, v in mapping.value:
            if getattr(k, "value", None) == key:
                return v
    return None


def _key_line(mapping: Any, key: str) -> int | None:
    if isinstance(mapping, yaml.MappingNode):
        for k, _ in mapping.value:
            if getattr(k, "value", None) == key:
                return k.start_mark.line + 1
    return mapping.start_mark.line + 1 if mapping is not None else None


def _line_at(node: Any, loc: tuple[Any, ...], default: int) -> int:
    """The line of the deepest YAML node on the path ``loc`` (a pydantic error's location)."""
    line = default
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            key_line = _key_line(node, str(part))
            child = _value(node, str(part))
            if child is None:
                return key_line or line
            node, line = child, child.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _reason(error: dict[str, Any], yaml_file: bool) -> str:
    where = ".".join(str(p) for p in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field (a case has id, proposition, title, context, key_points, decision_hinges, reference)"
    elif error["type"] == "missing":
        message = "missing: every case needs it"
    elif error["type"] == "string_pattern_mismatch" and error["loc"] == ("id",):
        message = "use letters, digits, '.', '_', ':' and '-' (80 at most), starting with a letter or digit"
    elif error["type"] == "string_type" and yaml_file:
        message += " (in YAML, quote a value that looks like a number or a date)"
    return f"{where}: {message}" if where else message


def _cases(raw: list[tuple[int, Any, Any]], path: Path) -> list[Case]:
    if not raw:
        raise _Refusal(None, "it has no cases")
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for line, data, node in raw:
        if not isinstance(data, dict):
            raise _Refusal(line, "a case must be a mapping with id and proposition")
        label = f"case {data['id']!r}: " if isinstance(data.get("id"), str) else ""
        if isinstance(data.get("reference"), str) and node is not None:
            data = {**data, "reference": _reference_file(path, data["reference"],
                                                         _line_at(node, ("reference",), line), label)}
        try:
            case = Case.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
            at = _line_at(node, tuple(error["loc"]), line) if node is not None else line
            raise _Refusal(at, f"{label}{_reason(error, node is not None)}{more}") from None
        if case.id in seen:
            at = _line_at(node, ("id",), line) if node is not None else line
            raise _Refusal(at, f"the id {case.id!r} is already used on line {seen[case.id]}: give each case its own id")
        seen[case.id] = line
        cases.append(case)
    return cases


def _reference_file(suite: Path, name: str, line: int, label: str) -> Any:
    target = (suite.parent / name) if not Path(name).is_absolute() else Path(name)
    try:
        return json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _Refusal(line, f"{label}reference: no file {target} (a path is read relative to the suite)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Refusal(line, f"{label}reference: {target} is not a readable JSON document ({exc})") from None
    except RecursionError:
        raise _Refusal(line, f"{label}reference: {target} is nested too deeply to be a debate document") from None
