"""The debate pipeline: orchestrator, then pro and con in parallel, then moderator; and challenges.

A :class:`DebateRun` holds every section produced so far. Running it again
fills only the missing sections, so a retry after a failure reruns only the
agent that failed. Progress is reported through ``on_event`` callbacks, which
may arrive from worker threads.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from . import agents, inputs, prompts
from .enforce import run_structured
from .errors import ClearSideError, DebateFailed, InputError
from .providers import Provider, Usage, get_provider
from .schema import (
    ACTIONS,
    SCHEMA_VERSION,
    ChallengeResponse,
    Context,
    Document,
    Moderator,
    Proposition,
    Side,
    jsonschema_errors,
)


@dataclass(frozen=True)
class Event:
    """``kind`` is one of start, delta, retry, done, error."""

    kind: str
    agent: str
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


OnEvent = Callable[[Event], None]
OnSection = Callable[["DebateRun", str], None]
SECTIONS = ("proposition", "pro", "con", "moderator")


@dataclass
class DebateRun:
    """Everything about one debate, finished or not."""

    raw_input: str
    context: Context | None = None
    proposition: Proposition | None = None
    pro: Side | None = None
    con: Side | None = None
    moderator: Moderator | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    violations: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_input(cls, question: str, *, geography: str | None = None, timeframe: str | None = None,
                   domain: str | None = None) -> DebateRun:
        """Apply the input rules; raises InputError with a message the user can act on."""
        fields = {"geography": geography, "timeframe": timeframe, "domain": domain}
        context = {k: v for k, value in fields.items() if (v := inputs.context_field(k, value))}
        return cls(raw_input=inputs.question(question), context=Context(**context) if context else None)

    @property
    def missing(self) -> list[str]:
        return [name for name in SECTIONS if getattr(self, name) is None]

    def missing_agents(self) -> list[str]:
        """The agents still to run: the orchestrator writes ``proposition``, the others their namesakes."""
        return ["orchestrator" if name == "proposition" else name for name in self.missing]


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def overall_confidence(pro: Side, con: Side) -> str:
    levels = {"low": 0, "medium": 1, "high": 2}
    scores = [levels[a.confidence] for a in (*pro.arguments, *con.arguments)]
    return ("low", "medium", "high")[round(sum(scores) / len(scores))]


def _notes(names: tuple[str, ...]) -> str:
    listed = ", ".join(f"{name} {version}" for name, version in prompts.versions(*names).items())
    return f"Prompt versions: {listed}. No citations requested."


def validate_document(data: dict[str, Any]) -> Document:
    """Validate a document with pydantic and the exported JSON Schema; raises InputError listing problems."""
    errors = jsonschema_errors(data)
    if errors:
        raise InputError("Not a valid ClearSide v1 document: " + "; ".join(errors[:8]))
    return Document.model_validate(data)


class Engine:
    """Runs agents against one provider with bounded re-asks."""

    def __init__(self, provider: Provider | str = "embedded", *, retries: int = 2, temperature: float = 0.4,
                 on_event: OnEvent | None = None, on_section: OnSection | None = None) -> None:
        self.provider = get_provider(provider) if isinstance(provider, str) else provider
        self.retries = retries
        self.temperature = temperature
        self.on_event = on_event or (lambda event: None)
        self.on_section = on_section or (lambda run, name: None)  # e.g. save it: called as each section lands
        self.last_usage: dict[str, Usage] = {}  # the latest challenge's usage and violations
        self.last_violations: list[dict[str, Any]] = []

    def _agent(self, run: DebateRun, spec: agents.AgentSpec, messages: list[dict[str, str]], prepare=None):
        self.on_event(Event("start", spec.name))
        usage = run.usage.setdefault(spec.name, Usage())
        try:
            result = run_structured(
                self.provider, agent=spec.name, messages=messages, model=spec.model, schema=spec.schema,
                retries=self.retries, temperature=self.temperature, max_tokens=spec.max_tokens, usage=usage,
                violations=run.violations, prepare=prepare,
                on_delta=lambda text: self.on_event(Event("delta", spec.name, text)),
                on_retry=lambda attempt, errors: self.on_event(
                    Event("retry", spec.name, data={"attempt": attempt, "errors": errors})),
            )
        except ClearSideError as exc:
            self.on_event(Event("error", spec.name, str(exc)))
            raise
        self.on_event(Event("done", spec.name, data={"seconds": round(usage.seconds, 2),
                                                     "tokens": usage.completion_tokens}))
        return result

    def _section(self, run: DebateRun, name: str, value: Any) -> None:
        """Keep a finished section on the run and hand it to ``on_section`` at once (before the others finish)."""
        setattr(run, name, value)
        self.on_section(run, name)

    def run(self, run: DebateRun) -> Document:
        """Fill every missing section of ``run`` and assemble the document."""
        try:
            if run.proposition is None:
                self._section(run, "proposition", self._agent(
                    run, agents.ORCHESTRATOR, agents.orchestrator_messages(run.raw_input, run.context),
                    prepare=agents.proposition_from_reply(run.raw_input, run.context)))
            self._advocates(run)
            if run.moderator is None:
                self._section(run, "moderator", self._agent(
                    run, agents.MODERATOR, agents.moderator_messages(run.proposition, run.pro, run.con)))
        except ClearSideError as exc:
            raise DebateFailed(exc, run) from exc
        return self.assemble(run)

    def _advocate(self, run: DebateRun, spec: agents.AgentSpec) -> None:
        self._section(run, spec.name, self._agent(run, spec, agents.advocate_messages(spec.name, run.proposition),
                                                  agents.drop_repeated_claims))

    def _advocates(self, run: DebateRun) -> None:
        """Pro and con run concurrently, each blind to the other; a success is kept even if the other fails."""
        todo = [spec for spec in (agents.PRO, agents.CON) if getattr(run, spec.name) is None]
        if not todo:
            return
        with ThreadPoolExecutor(max_workers=len(todo), thread_name_prefix="advocate") as pool:
            futures = [pool.submit(self._advocate, run, spec) for spec in todo]
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
                "generated_at": _now(),
                "model_info": {"provider": self.provider.name, "model": self.provider.model},
                "confidence_level": overall_confidence(run.pro, run.con),
                "notes": _notes(("orchestrator", "advocate", "moderator")),
            },
            "proposition": run.proposition.dump(),
            "pro": run.pro.dump(),
            "con": run.con.dump(),
            "moderator": run.moderator.dump(),
            "challenges": {"available_actions": list(ACTIONS), "responses": []},
        }
        return validate_document(data)

    def challenge(self, document: Document | dict[str, Any], action: str, target: str) -> Document:
        """Append one challenge response; nothing else in the document changes."""
        if action not in ACTIONS:
            raise InputError(f"Unknown challenge action {action!r}: use one of {', '.join(ACTIONS)}.")
        data = copy.deepcopy(document.dump() if isinstance(document, Document) else document)
        doc = validate_document(data)
        target = inputs.target(target)
        origin = agents.locate(data, target)
        run = DebateRun(raw_input=doc.proposition.raw_input)
        body = self._agent(run, agents.CHALLENGE,
                           agents.challenge_messages(doc.proposition, action, target, origin))
        response = ChallengeResponse(action=action, target=target, response=body)
        data["challenges"].setdefault("responses", []).append(response.dump())
        version = f"challenge {prompts.load('challenge').version}"
        notes = data["meta"].get("notes", "")
        if version not in notes:
            data["meta"]["notes"] = f"{notes} Challenge prompt: {version}.".strip()
        self.last_usage = run.usage
        self.last_violations = run.violations
        return validate_document(data)


def run_debate(question: str, *, geography: str | None = None, timeframe: str | None = None,
               domain: str | None = None, provider: Provider | str = "embedded", retries: int = 2,
               on_event: OnEvent | None = None) -> Document:
    """One call from question to validated document."""
    run = DebateRun.from_input(question, geography=geography, timeframe=timeframe, domain=domain)
    return Engine(provider, retries=retries, on_event=on_event).run(run)
