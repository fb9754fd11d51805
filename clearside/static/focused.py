"""An agent's section in several small calls instead of one: the "focused" strategy, and mending.

An advocate first names the categories of its arguments (three enum values, a few
tokens), then writes one argument per call in its chosen category while seeing the
claims it already made, then its summary, assumptions and uncertainties. The
moderator writes its synthesis one field per call. Each call repeats the agent's own
prompt and adds one instruction at the end, so a llama.cpp slot re-evaluates only that
instruction. Every part passes the agent's substance checks as it lands (a part that
fails is re-asked on its own, and the parts that passed are kept).

Mending (:func:`mend_side`, :func:`mend_moderator`) uses the same parts after a whole
reply failed its checks: what passed in that reply is kept and only the failing fields
are written again, part by part, instead of asking for the whole reply once more (on a
small model a whole re-ask rarely gets every field right at the same time).
``bench/quality.py`` measures both strategies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from .. import agents, checks, prompts
from ..enforce import with_fixes
from ..errors import QualityCheckError, SchemaViolationError
from ..schema import CATEGORY_VALUES, AgentQuality, Moderator, QualityItem, Side
from ..wire import array, obj, one_of

ARGUMENTS = 3  # the advocate prompt asks for 3 or 4 arguments: a side the checks thin below this is topped up
MEND_ARGUMENTS = 2  # a mended side has at least this many arguments (the whole reply's own minimum)
FLOOR = 2  # never ship a side with fewer arguments: below it, the side fails
SPARE = 2  # argument calls allowed beyond the target when a part fails its checks on every attempt
# A top-up is bounded: one fresh call per missing argument and one spare, none re-asked on its own (each call sees
# the arguments kept so far). Unbounded, a debate spent 4 to 16 top-up calls on a side (about 3 s each on the
# embedded model) and most of them repeated what was kept; a side still short after them ships flagged.
TOP_UP_SPARE = 1
# A mended argument gets one re-ask of its own (not the engine's two): a small model asked the same thing
# again mostly repeats itself, while a spare argument call sees what was kept so far, a fresh prompt.
MEND_RETRIES = 1
SUMMARY_FIELDS = ("executive_summary", "assumptions", "uncertainties")
MODERATOR_FIELDS = ("areas_of_agreement", "core_disagreements", "assumption_conflicts", "evidence_gaps",
                    "decision_hinges")


def _part(model: type[BaseModel], *fields: str) -> type[BaseModel]:
    """A model of some of ``model``'s fields, with their constraints."""
    return create_model(f"{model.__name__}Part", __config__=ConfigDict(extra="forbid"),
                        **{name: (model.model_fields[name].annotation, model.model_fields[name]) for name in fields})


class Categories(BaseModel):
    model_config = ConfigDict(extra="forbid")
    categories: list[str]


def _ask(messages: list[dict[str, str]], instruction: str, problems: Iterable[str] = ()) -> list[dict[str, str]]:
    """The agent's prompt plus one instruction, and what to fix when the part is written again."""
    return with_fixes([*messages, {"role": "user", "content": instruction}], list(problems))


def _scoped(check, merged: dict[str, Any], fields: Iterable[str], index: int | None = None):
    """The agent's check over what it has so far plus one part, keeping only the findings on that part.

    ``index``: the part is one more item of the list ``fields`` names (its findings are reported at 0).
    """
    fields = tuple(fields)

    def run(part: dict[str, Any]) -> list[checks.Finding]:
        if index is None:
            return [f for f in check({**merged, **part}) if f.path[0] in fields]
        (field,) = fields
        data = {**merged, field: [*merged.get(field, []), *part[field]]}
        return [dataclasses.replace(f, path=(field, 0, *f.path[2:])) for f in check(data)
                if f.path[:2] == (field, index)]

    return run


def _direction(spec: agents.AgentSpec) -> str:
    return "FOR" if spec.name == "pro" else "AGAINST"


@dataclasses.dataclass(frozen=True)
class _Advocate:
    """One advocate's side being written in parts: the engine and run it is written for, the agent, its checks
    and its prompt (``base``: every part's call repeats it and adds one instruction)."""

    engine: Any
    run: Any
    spec: agents.AgentSpec
    check: Any
    base: list[dict[str, str]]

    @classmethod
    def of(cls, engine, run, spec: agents.AgentSpec, check) -> _Advocate:
        return cls(engine, run, spec, check, engine.advocate_messages(run, spec))


def side(engine, run, spec: agents.AgentSpec, check) -> Side:
    """A whole side in parts: categories, one argument per call, then the summary fields."""
    advocate = _Advocate.of(engine, run, spec, check)
    wire = obj(categories=array(one_of(CATEGORY_VALUES), ARGUMENTS, ARGUMENTS))
    picked = engine.call(run, engine.call_spec(spec, model=Categories, schema=wire, max_tokens=40,
                                               check=lambda data: []),
                         _ask(advocate.base, prompts.render(prompts.load("advocate").tasks["categories"],
                                                            side=_direction(spec), count=str(ARGUMENTS))),
                         fresh=True).categories
    arguments = _arguments(advocate, [], list(dict.fromkeys(picked)), ARGUMENTS)
    return _finish(advocate, arguments, {}, SUMMARY_FIELDS)


def mend_side(engine, run, spec: agents.AgentSpec, check, review: checks.Review) -> Side:
    """A side whose whole reply failed its checks: keep what passed, write the failing fields in parts."""
    advocate = _Advocate.of(engine, run, spec, check)
    arguments = list(review.kept.get("arguments", []))
    if "arguments" in review.failing:
        # below the floor, or one category only: one more argument in a category not used yet, up to the target
        target = max(MEND_ARGUMENTS, len(arguments) + 1)
        arguments = _arguments(advocate, arguments, [], target, review.failing["arguments"], reask=True)
    kept = {name: review.kept[name] for name in SUMMARY_FIELDS if name not in review.failing}
    problems = {name: list(review.failing[name]) for name in SUMMARY_FIELDS if name in review.failing}
    if "arguments" in review.failing:
        # the kept summary was judged beside the arguments that failed: judge it again beside the new ones
        merged = {**kept, "arguments": arguments}
        findings = [f for f in check(merged) if f.path[0] in kept]
        outcome = checks.repair(merged, findings, checks.sides.FLOORS, last_attempt=False)
        record = run.quality.get(spec.name)
        if record is not None:
            record.items += [checks.quality_item(f, action) for f, action in outcome.done]
        kept = {name: outcome.data[name] for name in kept}
        for finding in outcome.reask:
            problems.setdefault(str(finding.path[0]), []).append(finding.message)
            kept.pop(str(finding.path[0]), None)
    wanted = [name for name in SUMMARY_FIELDS if name in problems]
    return _finish(advocate, arguments, kept, wanted, [problem for name in wanted for problem in problems[name]],
                   reask=True)


def _arguments(advocate: _Advocate, arguments: list[dict[str, Any]], chosen: list[str], target: int,
               problems: list[str] | None = None, *, reask: bool = False, spare: int = SPARE,
               retries: int | None = None) -> list[dict[str, Any]]:
    """``arguments`` plus one argument per call until ``target``; a part that keeps failing is dropped.

    ``problems``: why the arguments of a whole reply were sent back (told to the first new argument). ``spare``:
    calls allowed beyond the arguments missing; ``retries``: re-asks of one failing part (by default the engine's,
    or :data:`MEND_RETRIES` when ``reask``)."""
    engine, run, spec = advocate.engine, advocate.run, advocate.spec
    arguments = list(arguments)
    part = _part(Side, "arguments")
    failure: SchemaViolationError | None = None
    if retries is None:
        retries = min(MEND_RETRIES, engine.retries) if reask else engine.retries
    for _ in range(target - len(arguments) + spare):
        if len(arguments) >= target:
            break
        used = {a["category"] for a in arguments}
        # each argument takes the next category the advocate chose; once those are used, any other category
        allowed = [c for c in chosen if c not in used][:1] or [c for c in CATEGORY_VALUES if c not in used]
        # the explanation is written before the claim, so the claim sums up a reason instead of echoing the question
        fields = agents.ARGUMENT_WIRE["properties"]
        item = obj(category=one_of(allowed), explanation=fields["explanation"], claim=fields["claim"],
                   evidence_type=fields["evidence_type"], confidence=fields["confidence"])
        made = "\n".join(f"- {prompts.quote(a['claim'])}" for a in arguments) or "- (none yet)"
        category = f"the {allowed[0]} category" if len(allowed) == 1 else "a category you have not used yet"
        instruction = prompts.render(prompts.load("advocate").tasks["argument"], number=str(len(arguments) + 1),
                                     side=_direction(spec), category=category, made=made,
                                     proposition=prompts.quote(run.proposition.normalized_question))
        try:
            call = engine.call_spec(
                spec, model=part, schema=obj(arguments=array(item, 1, 1)), max_tokens=200,
                check=_scoped(advocate.check, {"arguments": arguments}, ["arguments"], len(arguments)),
                floors={"arguments": 1}, retries=retries)
            result = engine.call(run, call, _ask(advocate.base, instruction, problems or ()), fresh=False,
                                 reask=reask)
        except SchemaViolationError as exc:  # its checks or its schema (a reply cut at its token limit): the part
            failure = exc                   # goes, and the next call, which sees what was kept, may do better
            _dropped(run, spec.name, f"arguments/{len(arguments)}", exc)
            continue
        arguments += [a.model_dump(mode="json", exclude_none=True) for a in result.arguments]
        problems = None
    if not arguments and failure is not None:
        raise failure
    return arguments


def top_up(engine, run, spec: agents.AgentSpec, check, finished: Side) -> Side:
    """A side the checks thinned (they dropped some of its arguments: repeats, empty ones, parts that kept failing)
    to fewer than :data:`ARGUMENTS` arguments: ask for each missing argument in a small call of its own, checked
    against the arguments kept (so no repeat comes back); what passed stays. Below :data:`FLOOR` the side would
    fail, so the arguments it lacks for the floor get the mending budget (:data:`SPARE` spare calls, each re-asked
    once); the rest, towards the target, one call each and one spare, none re-asked (:data:`TOP_UP_SPARE`). Each
    top-up is recorded as a
    ``thin_side`` re-ask; a side left under :data:`ARGUMENTS` is flagged for the reader (see
    :func:`clearside.static.run.notes`); under :data:`FLOOR` it fails (QualityCheckError). A side the model wrote
    with two arguments, as its wire allows, and the checks left whole is kept as it is."""
    kept = [a.model_dump(mode="json", exclude_none=True) for a in finished.arguments]
    record = run.quality.get(spec.name)
    thinned = record is not None and any(item.action == "dropped" and item.path.split("/")[0] == "arguments"
                                         for item in record.items)
    if len(kept) >= ARGUMENTS or not thinned:
        return finished
    label = f"the case {_direction(spec).lower()}"
    for n in range(len(kept), ARGUMENTS):
        record.items.append(QualityItem(check="thin_side", path=f"arguments/{n}", action="reasked",
                                        message=f"{label} held {len(kept)} argument(s) after its checks; argument "
                                                f"{n + 1} was asked for on its own"))
    advocate, calls = _Advocate.of(engine, run, spec, check), record.attempts
    arguments = _arguments(advocate, kept, [], FLOOR, reask=True) if len(kept) < FLOOR else kept
    if len(arguments) < FLOOR:
        raise QualityCheckError(spec.name, record.attempts, [
            f"{label} held {len(arguments)} argument(s) after its checks and {record.attempts - calls} calls for "
            f"the missing ones; a case needs at least {FLOOR}"], "")
    arguments = _arguments(advocate, arguments, [], ARGUMENTS, reask=True, spare=TOP_UP_SPARE, retries=0)
    if len(arguments) < ARGUMENTS:
        record.items.append(QualityItem(check="thin_side", path="arguments", action="flagged",
                                        message=f"{label[:1].upper()}{label[1:]} holds {len(arguments)} arguments, "
                                                f"not {ARGUMENTS}: the checks rejected the others and their "
                                                "re-asks."))
    return finished.model_copy(update={"arguments": Side.model_validate(
        {**finished.model_dump(mode="json", exclude_none=True), "arguments": arguments}).arguments})


def _finish(advocate: _Advocate, arguments: list[dict[str, Any]], kept: dict[str, Any],
            wanted: list[str] | tuple[str, ...], problems: list[str] = (), *, reask: bool = False) -> Side:
    """The side from its arguments, the summary fields already kept, and one call for the ``wanted`` ones."""
    engine, spec = advocate.engine, advocate.spec
    values = dict(kept)
    if wanted:
        tasks = prompts.load("advocate").tasks
        claims = "\n".join(f"- {prompts.quote(a['claim'])}" for a in arguments)
        instruction = prompts.render(tasks["summary"], side=_direction(spec), claims=claims,
                                     wanted="; ".join(tasks[name] for name in wanted))
        wire = obj(**{name: agents.SIDE_WIRE["properties"][name] for name in wanted})
        call = engine.call_spec(spec, model=_part(Side, *wanted), schema=wire, max_tokens=400,
                                floors=checks.sides.FLOORS,
                                check=_scoped(advocate.check, {"arguments": arguments, **kept}, wanted))
        summary = engine.call(advocate.run, call, _ask(advocate.base, instruction, problems), fresh=False,
                              reask=reask)
        values.update(summary.model_dump(mode="json", exclude_none=True))
    return Side.model_validate({**values, "arguments": arguments})


def _dropped(run, agent: str, what: str, exc: SchemaViolationError) -> None:
    record = run.quality.setdefault(agent, AgentQuality(attempts=exc.attempts, reasks=exc.attempts - 1))
    failed = "failed its checks" if isinstance(exc, QualityCheckError) else "broke the schema"
    record.items.append(QualityItem(check="part_dropped", path=what, action="dropped",
                                    message=f"{what} still {failed} after {exc.attempts} attempts: "
                                            f"{'; '.join(exc.errors[:3])}"))


@dataclasses.dataclass(frozen=True)
class Frame:
    """What the moderator is asked with: its checks, its prompt, its wire and decode schemas, the minimum item
    count of each list and the sections it writes (a persona debate's frame adds lens_divergence)."""

    check: Any
    messages: list[dict[str, str]]
    wire: tuple[dict[str, Any], dict[str, Any]]
    floors: dict[str, int]
    fields: tuple[str, ...] = MODERATOR_FIELDS


def moderator(engine, run, frame: Frame) -> Moderator:
    """The synthesis one field per call."""
    return _moderator_fields(engine, run, frame, {}, frame.fields, fresh=True)


def mend_moderator(engine, run, frame: Frame, review: checks.Review) -> Moderator:
    """A synthesis whose whole reply failed its checks: keep the fields that passed, write the others (every
    field of the frame, so a persona debate's lens_divergence is written again like any other, never left out)."""
    kept = {name: value for name, value in review.kept.items() if name not in review.failing}
    return _moderator_fields(engine, run, frame, kept, [f for f in frame.fields if f in review.failing],
                             fresh=False, problems=review.failing)


def rewrite_moderator(engine, run, frame: Frame, kept: dict[str, Any], wanted: Iterable[str]) -> Moderator:
    """A synthesis with the ``wanted`` sections written afresh (one call each) and the ``kept`` ones as they are."""
    return _moderator_fields(engine, run, frame, kept, [f for f in frame.fields if f in wanted], fresh=True)


def _moderator_fields(engine, run, frame: Frame, merged: dict[str, Any], wanted, *, fresh: bool,
                      problems: dict[str, list[str]] | None = None) -> Moderator:
    base, check = frame.messages, frame.check
    schema, decode = frame.wire
    prepare = agents.conflicts_from_ids(run.pro, run.con)
    merged = dict(merged)
    for n, field in enumerate(wanted):
        instruction = prompts.render(prompts.load("moderator").tasks["part"], field=field)
        call = engine.call_spec(agents.MODERATOR, model=_part(Moderator, field),
                                schema=obj(**{field: schema["properties"][field]}),
                                decode=obj(**{field: decode["properties"][field]}), max_tokens=300,
                                prepare=prepare if field == "assumption_conflicts" else None,
                                check=_scoped(check, merged, [field]), floors=frame.floors)
        result = engine.call(run, call, _ask(base, instruction, (problems or {}).get(field, ())),
                             fresh=fresh and n == 0, reask=not fresh)
        merged.update(result.model_dump(mode="json", exclude_none=True))
    return Moderator.model_validate(merged)
