"""The single-pass control (``--strategy single``): one call writes both cases and the synthesis.

ClearSide's premise is that advocates blind to each other, and then a moderator who reads both, map an issue better
than one model asked once. This strategy is that one model asked once, the control the premise is measured against
(``python -m clearside value``). After the same orchestrator, ONE call writes the case FOR, the case AGAINST and
the synthesis:

- with the token budget of the three calls it stands for (:data:`MAX_TOKENS`);
- with the same rules in its prompt (``single.toml`` repeats the advocates' and the moderator's);
- through the same contract and the same substance checks: each case is judged by the advocates' checks and the
  synthesis by the moderator's, beside the cases as the same review leaves them.

A reply that fails is asked for again whole, as any agent's reply is; it is never mended or topped up in parts,
which would make it more than one pass. The three sections land together. The call's usage and quality record are
kept under the agent ``single``; its progress events are given to each section it writes (``pro``, ``con``,
``moderator``), so every view of a debate's progress follows it unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from .. import agents, checks
from ..errors import InputError
from ..runtime.events import Event
from ..schema import Moderator, Side
from ..wire import obj
from .focused import FLOOR

AGENT = "single"
WRITES = ("pro", "con", "moderator")  # the sections the one call writes, in the order they land
SIDE_FIELDS = tuple(agents.SIDE_WIRE["properties"])
MODERATOR_FIELDS = tuple(agents.MODERATOR_WIRE["properties"])
# the budget of the calls one pass stands for: both advocates' and the moderator's
MAX_TOKENS = agents.PRO.max_tokens + agents.CON.max_tokens + agents.MODERATOR.max_tokens
LABELS = {"pro": "the case FOR", "con": "the case AGAINST"}


def key(side: str, field: str) -> str:
    """A side's field in the one reply: ``pro_arguments``."""
    return f"{side}_{field}"


def wires() -> tuple[dict[str, Any], dict[str, Any]]:
    """The reply's wire schema and the schema it decodes with: both sides' fields (``pro_...``, ``con_...``) and the
    synthesis, whose conflicts pick the reply's own assumptions by place (P1 to P3, C1 to C3)."""
    most = agents.SIDE_WIRE["properties"]["assumptions"]["maxItems"]
    moderator_wire, moderator_decode = agents.moderator_wire_for(
        [f"P{i}" for i in range(1, most + 1)], [f"C{i}" for i in range(1, most + 1)])
    sides = {key(side, field): agents.SIDE_WIRE["properties"][field] for side in LABELS for field in SIDE_FIELDS}
    return obj(**sides, **moderator_wire["properties"]), obj(**sides, **moderator_decode["properties"])


def _fields(model: type[BaseModel], names: tuple[str, ...], prefix: str = "") -> dict[str, Any]:
    return {f"{prefix}{name}": (model.model_fields[name].annotation, model.model_fields[name]) for name in names}


Reply = create_model("SingleReply", __config__=ConfigDict(extra="forbid"),
                     **_fields(Side, SIDE_FIELDS, "pro_"), **_fields(Side, SIDE_FIELDS, "con_"),
                     **_fields(Moderator, MODERATOR_FIELDS))
WIRE, DECODE = wires()
SPEC = agents.AgentSpec(AGENT, AGENT, Reply, WIRE, MAX_TOKENS)
FLOORS = {**{key(side, field): (FLOOR if field == "arguments" else floor)
             for side in LABELS for field, floor in checks.sides.FLOORS.items()},
          **checks.moderator.FLOORS}


def side_of(data: dict[str, Any], side: str) -> dict[str, Any]:
    """One side's section out of the reply (as a dict)."""
    return {field: data.get(key(side, field), []) for field in SIDE_FIELDS}


def split(reply: BaseModel) -> tuple[Side, Side, Moderator]:
    """The reply as the three sections it writes."""
    data = reply.model_dump(mode="json", exclude_none=True)
    return (Side.model_validate(side_of(data, "pro")), Side.model_validate(side_of(data, "con")),
            Moderator.model_validate({field: data[field] for field in MODERATOR_FIELDS}))


def prepare(data: Any) -> Any:
    """Each conflict's chosen ids become the assumptions the reply itself listed there."""
    if not isinstance(data, dict):
        return data
    listed = [[str(item) for item in data.get(key(side, "assumptions")) or [] if isinstance(item, str)]
              for side in LABELS]
    return agents.conflicts_from_lists(*listed)(data)


def check(question: str, raw_input: str, embeddings: checks.Embeddings):
    """Each case judged by the advocates' checks, and the synthesis by the moderator's beside both cases."""

    def both(data: dict[str, Any]) -> list[checks.Finding]:
        findings: list[checks.Finding] = []
        for side, label in LABELS.items():
            found = checks.sides.check(side_of(data, side), question=question, raw_input=raw_input,
                                       embeddings=embeddings)
            findings += [dataclasses.replace(f, path=(key(side, str(f.path[0])), *f.path[1:]),
                                             message=f"In {label}, {f.message}") for f in found]
        synthesis = {field: data[field] for field in MODERATOR_FIELDS if field in data}
        return findings + checks.moderator.check(synthesis, pro=side_of(data, "pro"), con=side_of(data, "con"),
                                                 question=question, embeddings=embeddings)

    return both


def refuse(run) -> None:
    """InputError for a debate the control does not stand for: one with personas or with the user's sources."""
    if run.personas is not None or run.sources:
        raise InputError("The single-pass strategy is a control for plain FOR/AGAINST debates: it takes no "
                         "personas and no sources. Drop them, or choose the whole or focused strategy.")


def write(engine, run) -> None:
    """Write ``run``'s pro, con and moderator in one call, kept together once the reply passes (nothing when all
    three are there: a debate resumed after they landed)."""
    if run.pro is not None and run.con is not None and run.moderator is not None:
        return
    one = copy.copy(engine)  # the same engine, whose events of the call go to the three sections
    one.on_event = _mirror(engine.on_event)
    prompt = agents.single_messages(run.proposition, run.context, inferred=not engine.provider.small)
    result = one.agent(run, SPEC, prompt,
                       prepare=prepare, floors=FLOORS, schema=WIRE, decode=DECODE,
                       check=check(run.proposition.normalized_question, run.proposition.raw_input, engine.embeddings))
    for name, section in zip(WRITES, split(result), strict=True):
        engine.keep(run, name, section)


def _mirror(forward):
    """The one call's events, given to each section it writes. Its streamed text goes to the first section only (it
    is one reply: three copies would triple the progress rows); the others hear of its first token, empty, so every
    section shows as being written."""
    streaming = set()

    def on_event(event: Event) -> None:
        if event.agent != AGENT:
            forward(event)
            return
        if event.kind != "delta":
            streaming.clear()  # a start or a re-ask: the next token is a first token again
        for name in WRITES:
            if event.kind != "delta" or name == WRITES[0]:
                forward(dataclasses.replace(event, agent=name))
            elif name not in streaming:
                streaming.add(name)
                forward(dataclasses.replace(event, agent=name, text=""))

    return on_event
