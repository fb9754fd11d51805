"""The five agents: what each is shown, the wire schema it fills, and how its reply becomes a section.

Information flow (docs/design/agents.md#blindness): the orchestrator sees the raw
input and context; each advocate sees only the proposition; the moderator sees
the proposition and both cases; the challenge agent sees the proposition and
the one element under challenge.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from . import prompts
from .checks.text import folded
from .schema import (
    CATEGORY_VALUES,
    Context,
    Moderator,
    Proposition,
    ResponseBody,
    Side,
)
from .wire import array, obj, one_of, string

# One sentence each; room for the embedded decoder, whose sentence grammar reserves the longest 3-word opening
CLAIM, SENTENCE, LONG = 130, 150, 200


ORCHESTRATOR_WIRE = obj(
    normalized_question=string(LONG),
    context=obj(geography=string(40, 2), timeframe=string(40, 2), domain=string(40, 2)),
)
ARGUMENT_WIRE = obj(
    category=one_of(CATEGORY_VALUES), claim=string(CLAIM, statement=True), explanation=string(LONG),
    evidence_type=one_of(("fact", "projection", "analogy", "value_judgment")),
    confidence=one_of(("low", "medium", "high")),
)
SIDE_WIRE = obj(
    executive_summary=array(string(CLAIM, statement=True), 3, 5),
    arguments=array(ARGUMENT_WIRE, 2, 4),
    assumptions=array(string(), 2, 3),
    uncertainties=array(string(), 2, 3),
)
_NEUTRAL = string(neutral=True)
MODERATOR_WIRE = obj(
    areas_of_agreement=array(_NEUTRAL, 1, 3),
    core_disagreements=array(obj(topic=string(80, 3, words=True, neutral=True), description=_NEUTRAL,
                                 root_cause=_NEUTRAL), 1, 3),
    assumption_conflicts=array(obj(pro_assumption=string(), con_assumption=string(),
                                    conflict_description=_NEUTRAL), 1, 2),
    evidence_gaps=array(_NEUTRAL, 1, 3),
    decision_hinges=array(string(), 2, 4),
)

_QUESTION = r'^[A-Z][^"\\{}\[\]<>?\x00-\x1f]{8,%d}\?$'


def assumption_ids(side: str, side_body: Side) -> list[str]:
    """The ids the moderator picks a side's listed assumptions by: P1, P2 ... or C1, C2 ..."""
    return [f"{'P' if side == 'pro' else 'C'}{i}" for i in range(1, len(side_body.assumptions) + 1)]


def moderator_wire(pro: Side, con: Side) -> tuple[dict[str, Any], dict[str, Any]]:
    """The moderator's wire schema (replies are validated against it) and the schema it decodes with.

    The decode schema makes each conflict's assumptions an enum of the listed ids, so
    under constrained decoding the model can only pick assumptions the sides listed;
    ``conflicts_from_ids`` then writes their listed text. Replies from backends that do
    not constrain may also quote the listed text; anything else fails the traceability check.
    """
    return moderator_wire_for(assumption_ids("pro", pro), assumption_ids("con", con))


def moderator_wire_for(pro_ids: list[str], con_ids: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`moderator_wire` for assumptions picked by these ids (a single-pass reply lists its own: P1 to P3)."""
    wire, decode = copy.deepcopy(MODERATOR_WIRE), copy.deepcopy(MODERATOR_WIRE)
    # a hinge is decoded as a question: it must end with "?" (and hold no JSON punctuation)
    decode["properties"]["decision_hinges"]["items"] = {"type": "string", "pattern": _QUESTION % (SENTENCE - 2)}
    for side, ids in (("pro", pro_ids), ("con", con_ids)):
        wire["properties"]["assumption_conflicts"]["items"]["properties"][f"{side}_assumption"] = string(low=2)
        decode["properties"]["assumption_conflicts"]["items"]["properties"][f"{side}_assumption"] = one_of(ids)
    return wire, decode


def listed_assumptions(pro: Side, con: Side) -> str:
    """Both sides' listed assumptions with the ids a moderator picks them by (one per line, quoted)."""
    return "\n".join(f"- {label}: {prompts.quote(item)}" for side, body in (("pro", pro), ("con", con))
                     for label, item in zip(assumption_ids(side, body), body.assumptions, strict=True))


def conflicts_from_ids(pro: Side, con: Side):
    """A ``prepare`` hook for the moderator: each chosen id (or quoted text) becomes the listed assumption."""
    return conflicts_from_lists(pro.assumptions, con.assumptions)


def conflicts_from_lists(pro: list[str], con: list[str]):
    """:func:`conflicts_from_ids` over the assumptions as listed (P1 is ``pro[0]``, C1 ``con[0]``)."""
    listed = {side: {f"{'P' if side == 'pro' else 'C'}{i}": text for i, text in enumerate(items, 1)}
              for side, items in (("pro", pro), ("con", con))}
    by_text = {side: {folded(text): text for text in texts.values()} for side, texts in listed.items()}

    def prepare(data: dict[str, Any]) -> dict[str, Any]:
        conflicts = []
        for conflict in data.get("assumption_conflicts", []):
            conflict = dict(conflict)
            for side in ("pro", "con"):
                value = str(conflict.get(f"{side}_assumption", "")).strip()
                choice = listed[side].get(value.upper()) or by_text[side].get(folded(value))
                if choice:
                    conflict[f"{side}_assumption"] = choice
            conflicts.append(conflict)
        return {**data, "assumption_conflicts": conflicts}

    return prepare


CHALLENGE_WIRE = obj(
    analysis=array(string(LONG), 2, 4),
    historical_context=array(string(LONG), 1, 2),
    classification=one_of(("factual", "uncertain", "values_dependent")),
)

CHALLENGE_INSTRUCTIONS = {
    "question_assumption": ("Question this assumption",
                            "Test whether the assumption holds, where it is weakest, and what follows if it fails."),
    "stronger_counterargument": ("Give the strongest counterargument to this element",
                                 "State the strongest counterargument to it, steel-manned, with its own assumptions."),
    "evidence_that_changes_outcome": ("What evidence would change the outcome here",
                                      "Name the specific evidence or data that would change how this element is "
                                      "judged, and in which direction."),
    "question_source": ("Is this source reliable for this claim?",
                        "Judge whether the cited source can carry this claim: what kind of source it is, whether the "
                        "quoted passage says what the claim needs, and what would make it more or less reliable."),
}


@dataclass(frozen=True)
class AgentSpec:
    name: str
    prompt: str
    model: type[BaseModel]
    schema: dict[str, Any]
    max_tokens: int


AGENT_ORDER = ("orchestrator", "pro", "con", "moderator")  # a static debate's agents, in the order they run
# How people are shown the agents. A name on its own (a table's Agent column; the quality record also names the
# re-map's moderator rerun "remap"), in debate order; a short tag in a line of agents (what each one writes); what
# an agent is doing while it writes ("writing the case FOR": the Debate page's progress capitalises it).
AGENT_NAMES = {"orchestrator": "Orchestrator", "pro": "FOR", "con": "AGAINST", "moderator": "Moderator",
               "remap": "Re-map", "challenge": "Challenge", "single": "Single pass"}
AGENT_TAGS = {"orchestrator": "proposition", "pro": "FOR", "con": "AGAINST", "moderator": "moderator"}
AGENT_ACTIVITIES = {"orchestrator": "normalizing the proposition", "pro": "writing the case FOR",
                    "con": "writing the case AGAINST", "moderator": "mapping the disagreement",
                    "challenge": "answering the challenge"}

ORCHESTRATOR = AgentSpec("orchestrator", "orchestrator", Proposition, ORCHESTRATOR_WIRE, 200)
PRO = AgentSpec("pro", "advocate", Side, SIDE_WIRE, 900)
CON = AgentSpec("con", "advocate", Side, SIDE_WIRE, 900)
MODERATOR = AgentSpec("moderator", "moderator", Moderator, MODERATOR_WIRE, 900)
CHALLENGE = AgentSpec("challenge", "challenge", ResponseBody, CHALLENGE_WIRE, 500)
AGENTS = {spec.name: spec for spec in (ORCHESTRATOR, PRO, CON, MODERATOR, CHALLENGE)}


def context_block(context: Context | None, typed: Context | None | bool = True, *, inferred: bool = True) -> str:
    """The context as prompt lines: what the user typed as ``CONTEXT (USER TEXT): ...``, and the values the
    orchestrator inferred as ``SCOPE (INFERRED, NOT FROM THE USER): ...``; nothing when there is none.

    ``typed``: the user's own context (``True``: ``context`` is the user's own). ``inferred=False`` leaves the
    inferred values out: a small model turns "Geography: The World" into arguments about continents."""
    if context is None:
        return ""
    given = {k: v for k, v in context.dump().items() if v}
    if typed is True:
        own = given
    else:
        users = typed.dump() if isinstance(typed, Context) else {}
        own = {k: v for k, v in given.items() if users.get(k)}
    guessed = {k: v for k, v in given.items() if k not in own} if inferred else {}
    lines = [f"{label}: " + "; ".join(f"{k}: {prompts.quote(v)}" for k, v in values.items())
             for label, values in (("CONTEXT (USER TEXT)", own), ("SCOPE (INFERRED, NOT FROM THE USER)", guessed))
             if values]
    return "\n".join(lines)


def _messages(prompt: str, **variables: str) -> list[dict[str, str]]:
    template = prompts.load(prompt)
    variables = {"preamble": prompts.preamble(), **variables}
    return [{"role": "system", "content": prompts.render(template.system, **variables)},
            {"role": "user", "content": prompts.render(template.user, **variables)}]


def orchestrator_messages(raw_input: str, context: Context | None) -> list[dict[str, str]]:
    return _messages("orchestrator", question=prompts.quote(raw_input), context_block=context_block(context))


def topic(proposition: Proposition, typed: Context | None | bool = True, *, inferred: bool = True,
          sources: str = "") -> str:
    """The topic block: what the agents writing cases on ``proposition`` share, first in their user message.

    The proposition, as first asked, its context lines and (``sources``) the passages of the user's sources,
    each user text quoted. It depends on nothing but these, so it is byte-identical for the agents that run
    together (pro and con; a debate's personas) and a server caching evaluated prompts by prefix (llama.cpp's
    cache_prompt, vLLM's prefix caching, the embedded provider) evaluates it once for all of them: each agent's
    role comes after it."""
    lines = [prompts.render(prompts.load("global").tasks["topic"],
                            proposition=prompts.quote(proposition.normalized_question),
                            raw_input=prompts.quote(proposition.raw_input))]
    if block := context_block(proposition.context, typed, inferred=inferred):
        lines.append(block)
    if sources:
        lines += ["", sources]
    return "\n".join(lines)


def advocate_messages(side: str, proposition: Proposition, typed: Context | None | bool = True, *,
                      inferred: bool = True, sources: str = "", cite: str = "") -> list[dict[str, str]]:
    """An advocate's prompt: the global preamble as its system message, then the topic block it shares with the
    other advocate (:func:`topic`), its role and its task. ``typed``: the context the user typed (the rest of the
    proposition's context was inferred); ``inferred=False`` leaves the inferred values out of the prompt (small
    models); ``sources``: the passages of the user's sources offered to both advocates, and ``cite``: how to cite
    them, after the task (``clearside.citations``)."""
    role, direction = ("Pro Advocate", "FOR") if side == "pro" else ("Con Advocate", "AGAINST")
    return _messages("advocate", role=role, side=direction,
                     topic=topic(proposition, typed, inferred=inferred, sources=sources),
                     cite=f"\n\n{cite}" if cite else "")


def single_messages(proposition: Proposition, typed: Context | None | bool = True, *,
                    inferred: bool = True) -> list[dict[str, str]]:
    """The single-pass control's prompt (clearside.static.single): the preamble, the topic block the advocates
    get, then the advocates' and the moderator's rules and one task for all three sections."""
    return _messages("single", topic=topic(proposition, typed, inferred=inferred))


def _case_text(side: Side, ids: list[str] | None = None) -> str:
    """A compact digest of one case: what the moderator needs, without the explanations.

    With ``ids``, each assumption carries the id the moderator picks it by."""
    lines = [f"- [{a.category}; {a.evidence_type.replace('_', ' ')}; {a.confidence} confidence] "
             f"{f'({prompts.quote(a.persona)}) ' if a.persona else ''}{a.claim}" for a in side.arguments]
    labels = ids or ["" for _ in side.assumptions]
    lines += [f"- Assumption{' ' + label if label else ''}: {item}" for label, item in zip(labels, side.assumptions,
                                                                                         strict=True)]
    lines += [f"- Uncertainty: {item}" for item in side.uncertainties]
    return "\n".join(lines)


def moderator_messages(proposition: Proposition, pro: Side, con: Side) -> list[dict[str, str]]:
    return _messages("moderator", proposition=prompts.quote(proposition.normalized_question),
                     pro=_case_text(pro, assumption_ids("pro", pro)), con=_case_text(con, assumption_ids("con", con)))


def challenge_messages(proposition: Proposition, action: str, target: str, origin: str) -> list[dict[str, str]]:
    label, instruction = CHALLENGE_INSTRUCTIONS[action]
    return _messages("challenge", proposition=prompts.quote(proposition.normalized_question),
                     action_label=label, instruction=instruction, target=prompts.quote(target),
                     origin=f"WHERE IT COMES FROM: {origin}" if origin else "")


_PLACEHOLDERS = {"", "n/a", "na", "none", "unknown", "not specified", "unspecified", "not applicable", "-", "..."}


def proposition_from_reply(raw_input: str, user_context: Context | None):
    """A ``prepare`` hook: merge the orchestrator's reply with what only the engine knows."""

    def prepare(data: dict[str, Any]) -> dict[str, Any]:
        extracted = {k: v for k, v in (data.get("context") or {}).items()
                     if isinstance(v, str) and v.strip(" .").casefold() not in _PLACEHOLDERS}
        given = user_context.dump() if user_context else {}
        context = {**extracted, **given}  # what the user typed wins over what the model inferred
        result: dict[str, Any] = {"raw_input": raw_input, "normalized_question": data.get("normalized_question")}
        if context:
            result["context"] = context
        return result

    return prepare


def locate(document: dict[str, Any], target: str) -> str:
    """Where a challenge target comes from in the debate, in words ("" for free text)."""
    wanted = target.strip().casefold()
    labels = {"pro": "the case FOR", "con": "the case AGAINST"}
    for side, label in labels.items():
        section = document.get(side, {})
        for item in section.get("assumptions", []):
            if item.casefold() == wanted:
                return f"an assumption of {label}"
        for arg in section.get("arguments", []):
            if arg.get("claim", "").casefold() == wanted:
                return (f"a claim of {label} ({arg['category']}, {arg['evidence_type']}, "
                        f"{arg['confidence']} confidence): {prompts.quote(arg['explanation'])}")
    if wanted in (h.casefold() for h in document.get("moderator", {}).get("decision_hinges", [])):
        return "a decision hinge named by the moderator"
    return ""
