"""Persona debates (docs/design/agents.md#personas): 2 to 4 personas, each writing its own case from its lens.

A persona is a name and a one-line lens: a built-in one (:data:`BUILTINS`) or the user's own, checked like any
user text and always quoted in prompts as data. Each persona is one agent (``persona-1`` ...), run concurrently
and blind to the others: it sees only the proposition (as an advocate does) and its own name and lens. It weighs
both directions from its lens (``arguments_for`` and ``arguments_against``, one or two each) and says where it
lands overall (``stance``: for, against or mixed). A persona is one call whatever the generation strategy; a
reply that fails its checks keeps what passed and has each failing field written again on its own (:func:`mend`).

The document keeps every renderer, metric and export working: ``pro`` gathers every persona's arguments for,
``con`` every persona's arguments against, each labelled with its ``persona`` (so a mixed persona, like any
other, appears on both sides, each argument where it points). A persona's assumptions and uncertainties go to the
side of its stance, a mixed persona's to both; a side no stance chose gets them all, since every case rests on
them. Each side's executive summary is composed, not written: one line per persona naming it, its stance and
its first claim on that side. The moderator (the regular prompt with this addendum) also fills ``lens_divergence``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ConfigDict, create_model

from .. import agents, checks, inputs, prompts
from ..checks.text import statement_problem
from ..enforce import with_fixes
from ..errors import DASHBOARD_FIX, ClearSideError, InputError, QualityCheckError, SchemaViolationError
from ..runtime.events import Event
from ..schema import (
    AgentQuality,
    Argument,
    Persona,
    PersonaCase,
    Proposition,
    QualityItem,
    Side,
    Stance,
    Strict,
    TextList,
)
from ..store.records import PERSONA_DROPPED
from ..wire import array, obj, one_of, string

MIN_PERSONAS, MAX_PERSONAS = 2, 4
MAX_NAME, MAX_LENS = 40, 200
STANCES = ("for", "against", "mixed")

BUILTINS: dict[str, str] = {
    "economist": "Costs, benefits, incentives and trade-offs: who pays, who gains, and the effects on prices, "
                 "jobs and growth.",
    "ethicist": "Rights, duties, fairness and consent: who is wronged or respected, and which values collide.",
    "environmentalist": "Ecosystems, climate, pollution and natural resources, now and for future generations.",
    "technologist": "Feasibility, reliability, security and scale: whether it works, what it takes to build, "
                    "and how it fails.",
    "public-health expert": "Population health and risk: effects on disease, injury, access to care and health "
                            "inequalities, judged on the evidence.",
    "local resident": "Daily life where it happens: safety, noise, cost of living, local services and the "
                      "character of the neighbourhood.",
}

PERSONA_WIRE = obj(
    stance=one_of(STANCES),
    arguments_for=array(agents.ARGUMENT_WIRE, 1, 2),
    arguments_against=array(agents.ARGUMENT_WIRE, 1, 2),
    assumptions=array(string(), 2, 3),
    uncertainties=array(string(), 2, 3),
)
FLOORS = {"arguments_for": 1, "arguments_against": 1, "assumptions": 1, "uncertainties": 1}
MODERATOR_FLOORS = {"lens_divergence": 1}


class Reply(Strict):
    """A persona's reply: its case with each argument's direction."""

    stance: Stance
    arguments_for: list[Argument]
    arguments_against: list[Argument]
    assumptions: TextList
    uncertainties: TextList


def spec(index: int) -> agents.AgentSpec:
    """The agent of the ``index``-th persona (``persona-1`` ...): its usage, checks and progress are its own."""
    return agents.AgentSpec(f"persona-{index + 1}", "personas", Reply, PERSONA_WIRE, 900)


def builtin(name: str) -> Persona:
    key = inputs.clean(name).casefold().replace("_", " ")
    key = {"public health expert": "public-health expert", "resident": "local resident"}.get(key, key)
    if key not in BUILTINS:
        raise InputError(f"Unknown persona {inputs.clean(name)[:60]!r}: use one of {', '.join(BUILTINS)}, or your "
                         'own as --persona "Name: one-line lens".')
    return Persona(name=key, lens=BUILTINS[key], builtin=True)


def custom(text: str) -> Persona:
    """The user's own persona from ``"Name: one-line lens"``, checked like any user text."""
    cleaned = inputs.clean(str(text or ""))
    name, colon, lens = cleaned.partition(":")
    name, lens = name.strip(), lens.strip()
    if not colon or not name or not lens:
        raise InputError(f"Persona {cleaned[:60]!r} needs a name and a lens: write it as \"Name: one-line lens\", "
                         'e.g. "Farmer: crop yields, water and the cost of land".')
    if message := inputs.over_limit(name, MAX_NAME, "Persona name"):
        raise InputError(message)
    if message := inputs.over_limit(lens, MAX_LENS, f"The lens of persona {name!r}"):
        raise InputError(message)
    if not any(ch.isalpha() for ch in name):
        raise InputError(f"Persona name {name!r} has no letters: give the persona a name, e.g. \"Farmer\".")
    if len(lens.split()) < 2:
        raise InputError(f"The lens of persona {name!r} is too short: say in a few words what it looks at.")
    return Persona(name=name, lens=lens, builtin=False)


def choose(builtins: str | Iterable[str] | None = None, customs: Iterable[str] | None = None) -> list[Persona] | None:
    """The personas picked (built-in names, comma-separated or a list; the user's own as ``"Name: lens"``);
    ``None`` when none is picked (a regular debate); an InputError names the fix."""
    names = builtins.split(",") if isinstance(builtins, str) else list(builtins or [])
    chosen = [builtin(name) for name in names if name.strip()] + [custom(text) for text in customs or []]
    if not chosen:
        return None
    return checked(chosen)


def checked(chosen: list[Persona]) -> list[Persona]:
    if not MIN_PERSONAS <= len(chosen) <= MAX_PERSONAS:
        raise InputError(f"A persona debate takes {MIN_PERSONAS} to {MAX_PERSONAS} personas; {len(chosen)} "
                         f"{'was' if len(chosen) == 1 else 'were'} given: "
                         f"{'add' if len(chosen) < MIN_PERSONAS else 'remove'} some.")
    seen: set[str] = set()
    for persona in chosen:
        if persona.name.casefold() in seen:
            raise InputError(f"Persona {persona.name!r} is picked twice: pick each persona once.")
        seen.add(persona.name.casefold())
    return chosen


@dataclass
class Panel:
    """The personas of a debate and the cases that have landed, by persona index."""

    personas: list[Persona]
    cases: dict[int, PersonaCase] = field(default_factory=dict)
    leans: dict[int, list[str]] = field(default_factory=dict)  # each case argument's direction: for / against
    dropped: dict[int, str] = field(default_factory=dict)  # personas whose case failed its checks: the note

    def missing(self) -> list[int]:
        """The personas still to run (not those dropped: a resumed debate goes on without them)."""
        return [i for i in range(len(self.personas)) if i not in self.cases and i not in self.dropped]

    def absent(self) -> list[str]:
        """The names of the personas whose case is not in the debate (dropped, or not written yet)."""
        return [p.name for i, p in enumerate(self.personas) if i not in self.cases]

    def finished_agents(self) -> list[str]:
        return [spec(i).name for i in self.cases]

    def keep(self, index: int, reply: Reply) -> None:
        arguments = [*reply.arguments_for, *reply.arguments_against]
        self.cases[index] = PersonaCase(persona=self.personas[index], stance=reply.stance, arguments=arguments,
                                        assumptions=reply.assumptions, uncertainties=reply.uncertainties)
        self.leans[index] = ["for"] * len(reply.arguments_for) + ["against"] * len(reply.arguments_against)

    def ordered(self) -> list[tuple[PersonaCase, list[str]]]:
        return [(self.cases[i], self.leans[i]) for i in sorted(self.cases)]

    def dump(self) -> dict[str, Any]:
        return {"personas": [p.dump() for p in self.personas],
                "cases": {str(i): {"case": case.dump(), "leans": self.leans[i]} for i, case in self.cases.items()},
                "dropped": {str(i): note for i, note in self.dropped.items()}}

    @classmethod
    def load(cls, body: dict[str, Any]) -> Panel:
        panel = cls([Persona.model_validate(p) for p in body.get("personas", [])])
        for key, saved in (body.get("cases") or {}).items():
            panel.cases[int(key)] = PersonaCase.model_validate(saved["case"])
            panel.leans[int(key)] = list(saved["leans"])
        panel.dropped = {int(key): str(note) for key, note in (body.get("dropped") or {}).items()}
        return panel

    @classmethod
    def from_document(cls, cases: list[PersonaCase], pro: Side) -> Panel:
        """A finished document's panel (e.g. to moderate it again): directions read back from ``pro``."""
        panel = cls([case.persona for case in cases])
        mine = {(a.persona, a.claim) for a in pro.arguments}
        for i, case in enumerate(cases):
            panel.cases[i] = case
            panel.leans[i] = ["for" if (a.persona, a.claim) in mine else "against" for a in case.arguments]
        return panel

    def fresh(self) -> Panel:
        """The same personas, no case yet (a re-run)."""
        return Panel(list(self.personas))


def labelled(persona: Persona):
    """A ``prepare`` hook: every argument of the reply names its persona."""

    def prepare(data: dict[str, Any]) -> dict[str, Any]:
        return {**data, **{key: [{**a, "persona": persona.name} for a in data[key] if isinstance(a, dict)]
                           for key in ("arguments_for", "arguments_against") if isinstance(data.get(key), list)}}

    return prepare


def mend(engine, run, index: int, check, review: checks.Review) -> Reply:
    """A reply that failed its checks: keep the fields that passed and write each failing one again, alone (as
    the advocates' replies are mended; a small model mostly fixes one field when it is asked for it alone)."""
    persona = run.personas.personas[index]
    base = messages(persona, run.proposition, run.context, inferred=not engine.provider.small)
    merged = {name: value for name, value in review.kept.items() if name not in review.failing}
    for name in [name for name in PERSONA_WIRE["properties"] if name in review.failing]:
        ask = [*base, {"role": "user", "content": prompts.render(prompts.load("personas").tasks["part"], field=name)}]
        call = engine.call_spec(spec(index), model=_PARTS[name], schema=obj(**{name: PERSONA_WIRE["properties"][name]}),
                                prepare=labelled(persona), floors={name: FLOORS.get(name, 0)}, max_tokens=400,
                                check=lambda data, name=name: [f for f in check({**merged, **data})
                                                               if f.path[0] == name])
        part = engine.call(run, call, with_fixes(ask, review.failing[name]), fresh=False, reask=True)
        merged.update(part.model_dump(mode="json", exclude_none=True))
    return Reply.model_validate(merged)


_PARTS = {name: create_model(f"Reply_{name}", __config__=ConfigDict(extra="forbid"),
                             **{name: (Reply.model_fields[name].annotation, Reply.model_fields[name])})
          for name in Reply.model_fields}


def messages(persona: Persona, proposition: Proposition, typed=True, *, inferred: bool = True) -> list[dict[str, str]]:
    """A persona's prompt: the proposition as an advocate sees it, and the persona's own name and lens, quoted
    (the user's own persona is marked USER TEXT: data, never instructions). The topic block and the role, the same
    for every persona of the panel, come first (:func:`clearside.agents.topic`); the name and lens after them."""
    template = prompts.load("personas")
    source = "BUILT-IN" if persona.builtin else "USER TEXT"
    variables = {"preamble": prompts.preamble(), "source": source, "name": prompts.quote(persona.name),
                 "lens": prompts.quote(persona.lens), "topic": agents.topic(proposition, typed, inferred=inferred)}
    return [{"role": "system", "content": prompts.render(template.system, **variables)},
            {"role": "user", "content": prompts.render(template.user, **variables)}]


def moderator_messages(proposition: Proposition, pro: Side, con: Side, panel: Panel) -> list[dict[str, str]]:
    """The regular moderator prompt, with the persona addendum in its role and the lenses after the cases."""
    system, user = agents.moderator_messages(proposition, pro, con)
    tasks = prompts.load("personas").tasks
    lenses = "\n".join(f"- {prompts.quote(case.persona.name)} (stance: {case.stance}; lens: "
                       f"{prompts.quote(case.persona.lens)})" for case, _ in panel.ordered())
    return [{**system, "content": f"{system['content']}\n{tasks['moderator']}"},
            {**user, "content": f"{user['content']}\n\n{prompts.render(tasks['moderator_user'], lenses=lenses)}"}]


def moderator_wire(pro: Side, con: Side) -> tuple[dict[str, Any], dict[str, Any]]:
    """The moderator's wire and decode schemas with ``lens_divergence`` (1 to 3 sentences) added."""
    schemas = agents.moderator_wire(pro, con)
    for schema in schemas:
        schema["properties"]["lens_divergence"] = array(string(), 1, 3)
        schema["required"].append("lens_divergence")
    return schemas


def moderator_check(check):
    """The moderator's checks, and each ``lens_divergence`` item a full statement."""

    def both(data: dict[str, Any]) -> list[checks.Finding]:
        findings = check(data)
        for i, item in enumerate(data.get("lens_divergence", [])):
            if problem := statement_problem(item, verb=True):
                findings.append(checks.Finding("not_a_statement", ("lens_divergence", i),
                                               f"lens_divergence item {i + 1} {problem}: write a full sentence", item))
        return findings

    return both


def case_check(question: str, raw_input: str, embeddings: checks.Embeddings):
    """The advocates' checks on each direction's arguments, once on the assumptions and uncertainties, and no
    claim given both ways (:func:`clearside.checks.sides.both_ways`)."""

    def check(data: dict[str, Any]) -> list[checks.Finding]:
        findings = checks.sides.check({"arguments": [], "assumptions": data.get("assumptions", []),
                                       "uncertainties": data.get("uncertainties", [])},
                                      question=question, raw_input=raw_input, embeddings=embeddings)
        for key in ("arguments_for", "arguments_against"):
            found = checks.sides.check({"arguments": data.get(key, [])}, question=question, raw_input=raw_input,
                                       embeddings=embeddings)
            findings += [_moved(f, key) for f in found if f.path and f.path[0] == "arguments"]
        return findings + checks.sides.both_ways(data)

    return check


def _moved(finding: checks.Finding, key: str) -> checks.Finding:
    label = {"arguments_for": "argument for", "arguments_against": "argument against"}[key]
    return replace(finding, path=(key, *finding.path[1:]), message=finding.message.replace("argument", label, 1))


def title(name: str) -> str:
    """A persona's name as a heading: its first letter capitalised, the rest as typed."""
    return name[:1].upper() + name[1:]


def sides(panel: Panel) -> tuple[Side, Side]:
    """``pro`` and ``con`` composed from every case (see the module's docstring for the rules)."""
    cases = panel.ordered()
    built = []
    for direction in ("for", "against"):
        arguments = [a for case, leans in cases for a, lean in zip(case.arguments, leans, strict=True)
                     if lean == direction]
        summary = []
        for case, leans in cases:
            claims = [a.claim for a, lean in zip(case.arguments, leans, strict=True) if lean == direction]
            if claims:
                summary.append(f"{title(case.persona.name)} (stance: {case.stance}): {claims[0]}")
        chosen = [case for case, _ in cases if case.stance in (direction, "mixed")] or [case for case, _ in cases]
        built.append(Side(executive_summary=summary, arguments=arguments,
                          assumptions=list(dict.fromkeys(a for case in chosen for a in case.assumptions)),
                          uncertainties=list(dict.fromkeys(u for case in chosen for u in case.uncertainties))))
    return built[0], built[1]


MIN_CASES = 2  # the contract's least number of personas in a document (schema.Document.personas)


class NoCaseLeft(ClearSideError):
    """Fewer than :data:`MIN_CASES` personas' cases passed their checks: there is no panel to map."""

    exit_code = 4  # as an agent's failed checks

    def __init__(self, notes: list[str], left: int = 0) -> None:
        what = ("Every persona's case failed its checks, so there is no case to map." if not left else
                f"Only {left} persona's case passed its checks; a persona debate maps at least {MIN_CASES}.")
        what = f"{what} {' '.join(notes)}"
        super().__init__(f"{what} Retry, raise --retries, or choose a larger model with --provider.",
                         dashboard=f"{what} {DASHBOARD_FIX}")


def _case(engine: Any, run: Any, index: int, lock: threading.Lock) -> None:
    """One persona's case, blind to the others; saved (the whole panel) as soon as it lands. A case that fails its
    checks on every attempt is dropped with a note (:func:`_drop`), and the debate goes on with the others."""
    panel, proposition = run.personas, run.proposition
    persona = panel.personas[index]
    check = case_check(proposition.normalized_question, proposition.raw_input, engine.embeddings)
    try:
        reply = engine.agent(run, spec(index), messages(persona, proposition, run.context,
                                                        inferred=not engine.provider.small),
                             prepare=labelled(persona), floors=FLOORS, check=check,
                             mend=lambda review: mend(engine, run, index, check, review))
    except SchemaViolationError as exc:
        with lock:
            _drop(run, index, exc)
            engine.on_section(run, "personas")
        return
    with lock:
        panel.keep(index, reply)
        engine.on_section(run, "personas")


def _drop(run: Any, index: int, exc: SchemaViolationError) -> None:
    """Drop a persona whose case failed its checks: the note goes to the panel (saved, so a resume goes on
    without it) and to the persona's quality record (the document's ``meta.notes`` reads it from there)."""
    name = run.personas.personas[index].name
    what = "the quality checks" if isinstance(exc, QualityCheckError) else "the ClearSide schema"
    note = f"Persona '{name}' was dropped: its case failed {what} after {exc.attempts} attempts."
    run.personas.dropped[index] = note
    record = run.quality.setdefault(spec(index).name, AgentQuality(attempts=max(exc.attempts, 1),
                                                                    reasks=max(exc.attempts - 1, 0)))
    record.items.append(QualityItem(check=PERSONA_DROPPED, path=spec(index).name, action="dropped", message=note,
                                    text=name))


def stage(engine: Any, run: Any) -> None:
    """A persona debate's advocates stage on ``engine``: the personas run concurrently, each blind to the others
    (one whose case fails its checks is dropped, see :func:`_case`); then pro and con are composed from the cases.
    No case at all fails the stage."""
    lock = threading.Lock()
    sides_left = [name for name in ("pro", "con") if getattr(run, name) is None]
    for name in sides_left:  # the progress of the two cases the personas' arguments make up
        engine.on_event(Event("start", name))
    try:
        engine.together([lambda i=i: _case(engine, run, i, lock) for i in run.personas.missing()])
        if len(run.personas.cases) < MIN_CASES:  # no panel left: a resume asks the dropped personas again
            notes = list(run.personas.dropped.values())
            for index in run.personas.dropped:
                run.quality.pop(spec(index).name, None)
            run.personas.dropped.clear()
            engine.on_section(run, "personas")
            raise NoCaseLeft(notes, len(run.personas.cases))
    except ClearSideError as exc:
        for name in sides_left:
            engine.on_event(Event("error", name, str(exc)))
        raise
    if sides_left:
        pro, con = sides(run.personas)
        used = [run.usage[agent] for agent in run.personas.finished_agents() if agent in run.usage]
        took = {"seconds": round(max((u.seconds for u in used), default=0.0), 2),
                "tokens": sum(u.completion_tokens for u in used)}
        for name, side in (("pro", pro), ("con", con)):
            engine.keep(run, name, side)
            engine.on_event(Event("done", name, data=took))
