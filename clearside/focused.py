"""The "focused" generation strategy: an agent's section in several small calls instead of one.

An advocate first names the categories of its arguments (three enum values, a few
tokens), then writes one argument per call in its chosen category while seeing the
claims it already made, then its summary, assumptions and uncertainties. The
moderator writes its synthesis one field per call. Each call repeats the agent's own
prompt and adds one instruction at the end, so a llama.cpp slot re-evaluates only that
instruction. Every part passes the agent's substance checks as it lands (a part that
fails is re-asked on its own, and the parts that passed are kept). ``bench/quality.py``
measures this strategy against one call per agent ("whole").
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from . import agents, checks, prompts
from .errors import QualityCheckError
from .schema import CATEGORY_VALUES, AgentQuality, Moderator, QualityItem, Side

ARGUMENTS = 3
SPARE = 2  # argument calls allowed beyond ARGUMENTS when a part fails its checks on every attempt
MODERATOR_FIELDS = ("areas_of_agreement", "core_disagreements", "assumption_conflicts", "evidence_gaps",
                    "decision_hinges")


def _part(model: type[BaseModel], *fields: str) -> type[BaseModel]:
    """A model of some of ``model``'s fields, with their constraints."""
    return create_model(f"{model.__name__}Part", __config__=ConfigDict(extra="forbid"),
                        **{name: (model.model_fields[name].annotation, model.model_fields[name]) for name in fields})


class Categories(BaseModel):
    model_config = ConfigDict(extra="forbid")
    categories: list[str]


def _ask(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    return [*messages, {"role": "user", "content": instruction}]


def _only(check, field: str, merged: dict[str, Any], index: int | None = None):
    """The agent's check over what it has so far plus this part, keeping the findings on this part."""

    def run(part: dict[str, Any]) -> list[checks.Finding]:
        if index is None:
            return [f for f in check({**merged, **part}) if f.path[0] == field]
        data = {**merged, field: [*merged.get(field, []), *part[field]]}
        return [dataclasses.replace(f, path=(field, 0, *f.path[2:])) for f in check(data)
                if f.path[:2] == (field, index)]

    return run


def side(engine, run, spec: agents.AgentSpec, check) -> Side:
    base = agents.advocate_messages(spec.name, run.proposition)
    direction = "FOR" if spec.name == "pro" else "AGAINST"
    wire = {"type": "object", "properties": {"categories": agents._list(agents._enum(CATEGORY_VALUES), ARGUMENTS,
                                                                       ARGUMENTS)},
            "required": ["categories"], "additionalProperties": False}
    picked = engine.call(run, spec, _ask(base, prompts.render(
        prompts.load("advocate").tasks["categories"], side=direction, count=str(ARGUMENTS))),
        model=Categories, schema=wire, max_tokens=40, check=lambda data: [], fresh=True).categories
    chosen = list(dict.fromkeys(picked))
    arguments: list[dict[str, Any]] = []
    part = _part(Side, "arguments")
    failure: QualityCheckError | None = None
    for _ in range(ARGUMENTS + SPARE):  # a part that keeps failing is dropped; a spare call may replace it
        if len(arguments) == ARGUMENTS:
            break
        used = {a["category"] for a in arguments}
        # each argument takes the next category the advocate chose; once those are used, any other category
        allowed = [c for c in chosen if c not in used][:1] or [c for c in CATEGORY_VALUES if c not in used]
        # the explanation is written before the claim, so the claim sums up a reason instead of echoing the question
        fields = agents.ARGUMENT_WIRE["properties"]
        item = agents._obj(category=agents._enum(allowed), explanation=fields["explanation"], claim=fields["claim"],
                           evidence_type=fields["evidence_type"], confidence=fields["confidence"])
        made = "\n".join(f"- {prompts.quote(a['claim'])}" for a in arguments) or "- (none yet)"
        instruction = prompts.render(prompts.load("advocate").tasks["argument"], number=str(len(arguments) + 1),
                                     side=direction, category=" or ".join(allowed), made=made)
        try:
            result = engine.call(run, spec, _ask(base, instruction), model=part,
                                 schema=agents._obj(arguments=agents._list(item, 1, 1)), max_tokens=200,
                                 check=_only(check, "arguments", {"arguments": arguments}, len(arguments)),
                                 floors={"arguments": 1}, fresh=False)
        except QualityCheckError as exc:
            failure = exc
            _dropped(run, spec.name, f"arguments/{len(arguments)}", exc)
            continue
        arguments += [a.model_dump(mode="json") for a in result.arguments]
    if not arguments and failure is not None:
        raise failure
    claims = "\n".join(f"- {prompts.quote(a['claim'])}" for a in arguments)
    rest = ("executive_summary", "assumptions", "uncertainties")
    wire = agents._obj(**{name: agents.SIDE_WIRE["properties"][name] for name in rest})
    summary = engine.call(run, spec, _ask(base, prompts.render(prompts.load("advocate").tasks["summary"],
                                                               side=direction, claims=claims)),
                          model=_part(Side, *rest), schema=wire, max_tokens=400, fresh=False,
                          check=_only_fields(check, rest, {"arguments": arguments}), floors=checks.sides.FLOORS)
    return Side.model_validate({**summary.model_dump(mode="json"), "arguments": arguments})


def _only_fields(check, fields: tuple[str, ...], merged: dict[str, Any]):
    def run(part: dict[str, Any]) -> list[checks.Finding]:
        return [f for f in check({**merged, **part}) if f.path[0] in fields]

    return run


def _dropped(run, agent: str, what: str, exc: QualityCheckError) -> None:
    record = run.quality.setdefault(agent, AgentQuality(attempts=exc.attempts, reasks=exc.attempts - 1))
    record.items.append(QualityItem(check="part_dropped", path=what, action="dropped",
                                    message=f"{what} still failed its checks after {exc.attempts} attempts: "
                                            f"{'; '.join(exc.errors[:3])}"))


def moderator(engine, run, check) -> Moderator:
    base = agents.moderator_messages(run.proposition, run.pro, run.con)
    schema, decode = agents.moderator_wire(run.pro, run.con)
    prepare = agents.conflicts_from_ids(run.pro, run.con)
    merged: dict[str, Any] = {}
    for n, field in enumerate(MODERATOR_FIELDS):
        wire = agents._obj(**{field: schema["properties"][field]})
        tight = agents._obj(**{field: decode["properties"][field]})
        instruction = prompts.render(prompts.load("moderator").tasks["part"], field=field)
        result = engine.call(run, agents.MODERATOR, _ask(base, instruction), model=_part(Moderator, field),
                             schema=wire, decode=tight, max_tokens=300, fresh=n == 0,
                             prepare=prepare if field == "assumption_conflicts" else None,
                             check=_only(check, field, merged), floors=checks.moderator.FLOORS)
        merged.update(result.model_dump(mode="json", exclude_none=True))
    return Moderator.model_validate(merged)
