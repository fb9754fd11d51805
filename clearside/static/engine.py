"""The debate pipeline: orchestrator, then pro and con in parallel, then moderator; and challenges.

A persona debate (``DebateRun.personas``, :mod:`clearside.static.personas`) runs the same stages: its advocates stage
runs the personas in parallel instead, then composes ``pro`` and ``con`` from their cases, and its moderator
also fills ``lens_divergence``.

The engine fills a :class:`clearside.static.run.DebateRun`: given one again, it generates only the missing sections,
so a retry after a failure reruns only the agent that failed. Progress is reported through ``on_event`` callbacks,
which may arrive from worker threads.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .. import agents, checks, cruxes, inputs, prompts
from ..contract import overall_confidence, stamped, utc_stamp, validate_document
from ..enforce import HEALTH_QUESTION, CallSpec, Listeners, health_check, run_structured
from ..errors import ClearSideError, DebateFailed, InputError
from ..providers import Provider, Usage, get_provider
from ..providers.base import register_health_probe
from ..runtime.events import Event, OnEvent
from ..schema import (
    ACTIONS,
    ALL_ACTIONS,
    SCHEMA_VERSION,
    SOURCE_ACTION,
    AgentQuality,
    ChallengeResponse,
    Document,
    Moderator,
    Proposition,
    Quality,
)
from ..sources import citations
from ..store.records import PERSONA_DROPPED
from . import focused, personas, single
from .run import STAGES, STRATEGIES, DebateRun, default_strategy, merge_quality, notes

OnSection = Callable[[DebateRun, str], None]


class Engine:
    """Runs agents against one provider with bounded re-asks."""

    def __init__(self, provider: Provider | str = "embedded", *, retries: int = 2, temperature: float = 0.4,
                 on_event: OnEvent | None = None, on_section: OnSection | None = None, substance: bool = True,
                 strategy: str | None = None, embeddings: checks.Embeddings | None = None, mend: bool = True) -> None:
        self.provider = get_provider(provider) if isinstance(provider, str) else provider
        self.retries = retries
        self.temperature = temperature
        # run the substance checks (off only to measure what they catch, or to test a wire path alone)
        self.substance = substance
        self.strategy = strategy or default_strategy(self.provider)
        self.mending = mend  # a reply that fails its checks: rewrite only its failing fields, in parts
        if self.strategy not in STRATEGIES:
            raise InputError(f"Unknown generation strategy {self.strategy!r}: use one of {', '.join(STRATEGIES)}.")
        self.embeddings = embeddings or checks.Embeddings()
        self.on_event = on_event or (lambda event: None)
        self.on_section = on_section or (lambda run, name: None)  # e.g. save it: called as each section lands
        self.last_usage: dict[str, Usage] = {}  # the latest challenge's usage and violations
        self.last_violations: list[dict[str, Any]] = []
        self.last_quality: dict[str, AgentQuality] = {}  # the latest moderate()'s checks, per agent

    def call_spec(self, spec: agents.AgentSpec, **fields: Any) -> CallSpec:
        """A call of the agent ``spec`` as this engine makes it (its contract model, wire schema and token limit;
        the engine's re-asks and temperature), with ``fields`` of :class:`CallSpec` changed."""
        return CallSpec(**{"agent": spec.name, "model": spec.model, "schema": spec.schema,
                           "max_tokens": spec.max_tokens, "retries": self.retries, "temperature": self.temperature,
                           **fields})

    def _review(self, run: DebateRun, call: CallSpec, fresh: bool, reask: bool) -> checks.Review | None:
        """The agent's substance review; ``fresh=False`` adds to the record of the agent's earlier calls."""
        if not self.substance or call.check is None:
            return None
        review = checks.Review(call.check, call.floors or {}, None if fresh else run.quality.get(call.agent),
                               reasking=reask)
        run.quality[call.agent] = review.record
        return review

    def call(self, run: DebateRun, call: CallSpec, messages: list[dict[str, str]], *, fresh: bool = True,
             reask: bool = False):
        """One structured call for an agent (re-asks included, ``call.mend`` only when the engine mends),
        streaming deltas and retries as events.

        ``fresh=False``: one more part of the agent's reply, added to its quality record; ``reask``: this call
        itself rewrites part of a reply that was sent back (counted as a re-ask)."""
        agent = call.agent
        if not fresh:
            self.on_event(Event("part", agent))
        listeners = Listeners(
            on_delta=lambda text: self.on_event(Event("delta", agent, text)),
            on_retry=lambda attempt, errors: self.on_event(
                Event("retry", agent, data={"attempt": attempt, "errors": errors})),
            on_retrying=lambda data: self.on_event(Event("retry", agent, data=data)),  # a provider retry
        )
        return run_structured(self.provider, call if self.mending else dataclasses.replace(call, mend=None), messages,
                              usage=run.usage.setdefault(agent, Usage()), violations=run.violations,
                              review=self._review(run, call, fresh, reask), listeners=listeners)

    def agent(self, run: DebateRun, spec: agents.AgentSpec, messages: list[dict[str, str]] | None = None,
               focused=None, **fields):
        """Run one agent between its start and done events: one call (``fields``: of its :class:`CallSpec`), or
        ``focused(self, run)``'s parts."""
        self.on_event(Event("start", spec.name))
        try:
            result = focused(self, run) if focused else self.call(run, self.call_spec(spec, **fields), messages)
        except ClearSideError as exc:
            self.on_event(Event("error", spec.name, str(exc)))
            raise
        usage = run.usage.setdefault(spec.name, Usage())
        self.on_event(Event("done", spec.name, data={"seconds": round(usage.seconds, 2),
                                                     "tokens": usage.completion_tokens}))
        return result

    def keep(self, run: DebateRun, name: str, value: Any) -> None:
        """Keep a finished section on the run and hand it to ``on_section`` at once (before the others finish)."""
        setattr(run, name, value)
        self.on_section(run, name)

    def run(self, run: DebateRun) -> Document:
        """Fill every missing section of ``run`` and assemble the document. A persona dropped for failing its
        checks leaves it partial: ``clearside.missing_parts(document.dump())`` says what it lacks."""
        for stage in STAGES:
            self.run_stage(run, stage)
        return self.assemble(run)

    def run_stage(self, run: DebateRun, stage: str) -> None:
        """Fill the missing sections of one stage of :data:`STAGES` (the durable runtime makes each a step);
        raises DebateFailed with what the run holds."""
        if self.substance and run.missing and stage == STAGES[0]:
            # the embedding model loads while the first agent generates, not after it
            threading.Thread(target=self.embeddings.warm, name="clearside-embed-warm", daemon=True).start()
        if self.strategy == "single":
            single.refuse(run)
        try:
            if stage == "orchestrator" and run.proposition is None:
                self.keep(run, "proposition", self._orchestrator(run))
            elif stage == "advocates" and self.strategy == "single":
                single.write(self, run)
            elif stage == "advocates" and run.personas is not None:
                personas.stage(self, run)
            elif stage == "advocates":
                self._advocates(run)
            elif stage == "moderator" and run.moderator is None:
                self.keep(run, "moderator", self._moderator(run))
            elif stage not in STAGES:
                raise InputError(f"Unknown stage {stage!r}: use one of {', '.join(STAGES)}.")
        except ClearSideError as exc:
            raise DebateFailed(exc, run) from exc

    def _user_context(self, run: DebateRun) -> dict[str, str]:
        return run.context.dump() if run.context else {}

    def _orchestrator(self, run: DebateRun) -> Proposition:
        year = checks.this_year()

        def check(data: dict[str, Any]) -> list[checks.Finding]:
            return checks.proposition.check(data, raw_input=run.raw_input, user_context=self._user_context(run),
                                            year_now=year, embeddings=self.embeddings)

        return self.agent(run, agents.ORCHESTRATOR, agents.orchestrator_messages(run.raw_input, run.context),
                           prepare=agents.proposition_from_reply(run.raw_input, run.context), check=check)

    def _moderator_frame(self, run: DebateRun) -> focused.Frame:
        """What the moderator is asked with for this run: its checks, prompt, schemas, floors and fields (a persona
        debate's add lens_divergence)."""
        pro, con = run.pro.dump(), run.con.dump()

        def check(data: dict[str, Any]) -> list[checks.Finding]:
            return checks.moderator.check(data, pro=pro, con=con, question=run.proposition.normalized_question,
                                          embeddings=self.embeddings)

        if run.personas is not None:
            return focused.Frame(check=personas.moderator_check(check),
                                 messages=personas.moderator_messages(run.proposition, run.pro, run.con,
                                                                      run.personas),
                                 wire=personas.moderator_wire(run.pro, run.con),
                                 floors={**checks.moderator.FLOORS, **personas.MODERATOR_FLOORS},
                                 fields=(*focused.MODERATOR_FIELDS, *personas.MODERATOR_FLOORS))
        messages = agents.moderator_messages(run.proposition, run.pro, run.con)
        names = [s.name for s in run.sources] if run.sources else run.source_names
        if names:  # the evidence gaps say what the user's own sources leave open
            system, user = messages
            note = prompts.render(prompts.load("moderator").tasks["sources"],
                                  names=", ".join(prompts.quote(name) for name in names))
            messages = [system, {**user, "content": f"{user['content']}\n\n{note}"}]
        return focused.Frame(check=check, messages=messages, wire=agents.moderator_wire(run.pro, run.con),
                             floors=checks.moderator.FLOORS)

    def _moderator(self, run: DebateRun) -> Moderator:
        frame = self._moderator_frame(run)
        if run.personas is None and self.strategy == "focused":
            return self.agent(run, agents.MODERATOR, focused=lambda engine, r: focused.moderator(engine, r, frame))
        # a persona debate's moderator is one call whatever the strategy: lens_divergence needs the whole picture
        schema, decode = frame.wire
        return self.agent(run, agents.MODERATOR, frame.messages, prepare=agents.conflicts_from_ids(run.pro, run.con),
                           check=frame.check, floors=frame.floors, schema=schema, decode=decode,
                           mend=lambda review: focused.mend_moderator(self, run, frame, review))

    def _advocate(self, run: DebateRun, spec: agents.AgentSpec) -> None:
        proposition = run.proposition

        def check(data: dict[str, Any]) -> list[checks.Finding]:
            return checks.sides.check(data, question=proposition.normalized_question,
                                      raw_input=proposition.raw_input, embeddings=self.embeddings)

        offered = self._offered(run, spec)
        messages = self.advocate_messages(run, spec)
        cited = bool(offered and run.citations)
        wire: dict[str, Any] = {}
        if cited:  # the arguments cite the passages: the side's wire with citations
            schema, decode = citations.side_wire(agents.SIDE_WIRE, offered)
            wire = {"schema": schema, "decode": decode, "prepare": citations.prepare}

        def write(engine: Engine, r: DebateRun):
            if self.strategy == "focused" and not offered:
                made = focused.side(engine, r, spec, check)
            else:  # with sources, one call whatever the strategy: its arguments cite the passages it was shown
                made = self.call(r, self.call_spec(spec, check=check, floors=checks.sides.FLOORS, **wire,
                                                   mend=lambda review: focused.mend_side(self, r, spec, check,
                                                                                         review)), messages)
            # a side the checks thinned is asked for the missing arguments, not shipped thin
            return made if cited else focused.top_up(engine, r, spec, check, made)

        side = self.agent(run, spec, focused=write)
        if cited:
            side = citations.settle(self, run, spec, side, run.library, offered, messages)
        self.keep(run, spec.name, side)

    def _offered(self, run: DebateRun, spec: agents.AgentSpec) -> list:
        """The passages of the user's sources this advocate is shown, the same for both advocates so they sit in
        the prompt prefix the two share (none without sources)."""
        if not run.sources:
            return []
        limit = citations.SMALL_BUDGET if self.provider.small else citations.BUDGET
        return citations.offer(self._library(run), run.proposition.normalized_question, limit)

    def _library(self, run: DebateRun) -> citations.Library:
        """The run's sources cut into passages and indexed, once per run."""
        if run.library is None:
            run.library = citations.Library.build(run.sources or [], self.embeddings)
        return run.library

    def advocate_messages(self, run: DebateRun, spec: agents.AgentSpec) -> list[dict[str, str]]:
        """The advocate's prompt: the user's own context as user text; what the orchestrator inferred is labelled
        so, and left out for a small model (it writes about whatever scope it is shown); the passages of the
        user's sources it is offered, as quoted data in the topic block both advocates share, and how to cite them
        after its task."""
        offered = self._offered(run, spec)
        return agents.advocate_messages(spec.name, run.proposition, run.context, inferred=not self.provider.small,
                                        sources=citations.prompt_block(run.library, offered) if offered else "",
                                        cite=citations.cite_block() if offered else "")

    def _advocates(self, run: DebateRun) -> None:
        """Pro and con run concurrently, each blind to the other; a success is kept even if the other fails."""
        todo = [spec for spec in (agents.PRO, agents.CON) if getattr(run, spec.name) is None]
        self.together([lambda spec=spec: self._advocate(run, spec) for spec in todo])

    @staticmethod
    def together(tasks: list[Callable[[], None]]) -> None:
        """Run ``tasks`` concurrently (a stage's agents, side by side); every success is kept even if another fails
        (the first failure is raised)."""
        if not tasks:
            return
        with ThreadPoolExecutor(max_workers=len(tasks), thread_name_prefix="advocate") as pool:
            futures = [pool.submit(task) for task in tasks]
        failure = None
        for future in futures:
            try:
                future.result()
            except ClearSideError as exc:
                failure = failure or exc
        if failure:
            raise failure

    def assemble(self, run: DebateRun) -> Document:
        data = {
            "meta": {
                "schema_version": SCHEMA_VERSION,
                "generated_at": utc_stamp(),
                "model_info": {"provider": self.provider.name, "model": self.provider.model},
                "confidence_level": overall_confidence(run.pro, run.con),
                "notes": notes(("orchestrator", "single") if self.strategy == "single" else
                               ("orchestrator", "personas" if run.personas else "advocate", "moderator"), run),
            },
            "proposition": run.proposition.dump(),
            "pro": run.pro.dump(),
            "con": run.con.dump(),
            "moderator": run.moderator.dump(),
            "challenges": {"available_actions": [*ACTIONS, *([SOURCE_ACTION] if run.sources and run.citations else [])],
                           "responses": []},
        }
        if run.personas is not None:
            data["personas"] = [case.dump() for case, _ in run.personas.ordered()]
        if run.sources:
            data["sources"] = citations.document_sources(self._library(run), [run.pro, run.con])
        if self.substance or any(i.check == PERSONA_DROPPED for q in run.quality.values() for i in q.items):
            data["quality"] = self.quality(run).dump()  # a dropped persona is kept there (see run.missing)
        # what rests on each hinge (no model call: similarity, about 2 s with MiniLM loaded)
        return cruxes.attach(validate_document(stamped(data)), self.embeddings)

    def quality(self, run: DebateRun) -> Quality:
        """The debate's quality record: each agent's checks, and the context values the model inferred."""
        context = run.proposition.context.dump() if run.proposition and run.proposition.context else {}
        return Quality(checks_version=checks.CHECKS_VERSION, strategy=self.strategy, semantic=self.embeddings.enabled,
                       agents=run.quality, inferred=checks.proposition.inferred(context, self._user_context(run)))

    def challenge(self, document: Document | dict[str, Any], action: str, target: str) -> Document:
        """Append one challenge response; nothing else in the document changes."""
        if action not in ALL_ACTIONS:
            raise InputError(f"Unknown challenge action {action!r}: use one of {', '.join(ALL_ACTIONS)}.")
        data = copy.deepcopy(document.dump() if isinstance(document, Document) else document)
        doc = validate_document(data)
        target = inputs.target(target)
        cited = citations.challenged(data, target)  # a citation: the answer quotes the passage it discusses
        if cited is None and action == SOURCE_ACTION:
            raise InputError("“Is this source reliable for this claim?” asks about a citation: give one of the "
                             "debate's citations as the target (its passage id, or [S1.3] \"the quote\").")
        target = citations.target(cited.citation) if cited else target
        origin = citations.challenge_origin(cited) if cited else agents.locate(data, target)
        messages = agents.challenge_messages(doc.proposition, action, target, origin)
        options: dict[str, Any] = {}
        if cited:
            messages[-1] = {**messages[-1], "content": f"{messages[-1]['content']}\n{citations.challenge_block(cited)}"}
            options["schema"], options["decode"] = citations.challenge_wire(agents.CHALLENGE_WIRE, cited)
            options["prepare"] = citations.prepare_answer
        run = DebateRun(raw_input=doc.proposition.raw_input)

        about = f"{cited.claim} {cited.citation['quote']}" if cited else target  # a citation: its claim and quote

        def check(body: dict[str, Any]) -> list[checks.Finding]:
            return checks.challenge.check(body, target=about, embeddings=self.embeddings)

        body = self.agent(run, agents.CHALLENGE, messages, check=check, floors={"analysis": 1}, **options)
        if cited:
            body, items = citations.settle_answer(body, cited)
            if "challenge" in run.quality:
                run.quality["challenge"].items += items
        response = ChallengeResponse(action=action, target=target, response=body)
        data["challenges"].setdefault("responses", []).append(response.dump())
        if cited and SOURCE_ACTION not in data["challenges"]["available_actions"]:
            data["challenges"]["available_actions"].append(SOURCE_ACTION)
        if "challenge" in run.quality and data.get("quality"):
            data["quality"]["agents"]["challenge"] = merge_quality(data["quality"]["agents"].get("challenge"),
                                                                   run.quality["challenge"]).dump()
        version = f"challenge {prompts.load('challenge').version}"
        notes = data["meta"].get("notes", "")
        if version not in notes:
            data["meta"]["notes"] = f"{notes} Challenge prompt: {version}.".strip()
        self.last_usage = run.usage
        self.last_violations = run.violations
        return validate_document(data)

    def moderate(self, document: Document | dict[str, Any], fields: tuple[str, ...] | None = None) -> Moderator:
        """A fresh synthesis of a finished document's proposition and cases: only the moderator stage runs,
        exactly as in :meth:`run` (prompt, checks, repairs); the document is not changed. ``fields``: write only
        these sections afresh, one call each on the same prompt, and keep the others from the document's
        synthesis. Its usage, violations and quality record are ``last_usage``, ``last_violations`` and
        ``last_quality``, as for a challenge."""
        doc = document if isinstance(document, Document) else validate_document(copy.deepcopy(document))
        run = DebateRun(raw_input=doc.proposition.raw_input, proposition=doc.proposition, pro=doc.pro, con=doc.con,
                        personas=personas.Panel.from_document(doc.personas, doc.pro) if doc.personas else None,
                        source_names=[s.name for s in doc.sources] if doc.sources else None)
        if fields:
            frame = self._moderator_frame(run)
            unknown = [name for name in fields if name not in frame.fields]
            if unknown:
                raise InputError(f"Unknown synthesis section {unknown[0]!r}: use one of {', '.join(frame.fields)}.")
            kept = {k: v for k, v in doc.moderator.dump().items() if k in frame.fields and k not in fields}
            moderator = self.agent(run, agents.MODERATOR, focused=lambda engine, r: focused.rewrite_moderator(
                engine, r, frame, kept, fields))
        else:
            moderator = self._moderator(run)
        self.last_usage = run.usage
        self.last_violations = run.violations
        self.last_quality = run.quality
        return moderator


# Provider.check() ("Test connection") makes the first call of a debate: the orchestrator's, on its schema
register_health_probe(lambda provider: health_check(provider, agents.ORCHESTRATOR, agents.orchestrator_messages(
    HEALTH_QUESTION, None), agents.proposition_from_reply(HEALTH_QUESTION, None)))


def run_debate(question: str, *, geography: str | None = None, timeframe: str | None = None,
               domain: str | None = None, provider: Provider | str = "embedded", retries: int = 2,
               on_event: OnEvent | None = None) -> Document:
    """One call from question to validated document."""
    run = DebateRun.from_input(question, geography=geography, timeframe=timeframe, domain=domain)
    return Engine(provider, retries=retries, on_event=on_event).run(run)
