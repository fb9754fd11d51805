"""One static debate as data: :class:`DebateRun` holds every section produced so far (a run given to the engine again
fills only the missing sections, so a retry after a failure reruns only the agent that failed), with the names of a
debate's sections and stages, and the generation strategies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import inputs, prompts
from ..agents import AGENT_NAMES
from ..checks import summary
from ..errors import InputError
from ..providers import Provider, Usage
from ..schema import AgentQuality, Context, Moderator, Persona, Proposition, Side
from ..sources import Source, citations
from ..store.records import PERSONA_DROPPED
from . import personas

SECTIONS = ("proposition", "pro", "con", "moderator")
STAGES = ("orchestrator", "advocates", "moderator")  # the order of a debate; pro and con run side by side


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
    quality: dict[str, AgentQuality] = field(default_factory=dict)  # per agent: what the substance checks caught
    # a persona debate: its personas and their cases (saved as the section "personas"); None: pro and con advocates
    personas: personas.Panel | None = None
    # the user's own sources (docs/design/requirements.md#us-010): shown to the advocates; with ``citations``, quoted
    # and verified
    sources: list[Source] | None = None
    citations: bool = True
    library: citations.Library | None = field(default=None, repr=False)  # built once per run, on first use
    source_names: list[str] | None = None  # a finished debate's sources by name (a re-run moderator's note)

    @classmethod
    def from_input(cls, question: str, *, geography: str | None = None, timeframe: str | None = None,
                   domain: str | None = None, personas: list[Persona] | None = None,
                   sources: list[Source] | None = None, cite: bool = True) -> DebateRun:
        """Apply the input rules; raises InputError with a message the user can act on. ``personas``: 2 to 4
        (see :func:`clearside.personas.choose`) make it a persona debate; ``sources``: the user's own files
        (:func:`clearside.sources.read_sources`), which the advocates draw on, and with ``cite`` quote."""
        context = inputs.context_fields({"geography": geography, "timeframe": timeframe, "domain": domain})
        panel = _panel(personas) if personas else None
        if panel is not None and sources:
            raise InputError("Sources are used by pro/con debates, not yet by persona debates: drop the sources or "
                             "the personas.")
        return cls(raw_input=inputs.question(question), context=Context(**context) if context else None,
                   personas=panel, sources=list(sources) if sources else None, citations=cite)

    @property
    def missing(self) -> list[str]:
        return [name for name in SECTIONS if getattr(self, name) is None]

    def sections(self) -> dict[str, Any]:
        """The sections written so far as the store saves them (name to body; a persona debate's panel as
        ``personas``): what :func:`clearside.store.records.missing_parts` reads."""
        return {name: getattr(self, name).dump() for name in (*SECTIONS, "personas") if getattr(self, name) is not None}

    def missing_agents(self) -> list[str]:
        """The agents still to run: the orchestrator writes ``proposition``, the others their namesakes."""
        return ["orchestrator" if name == "proposition" else name for name in self.missing]


def _panel(chosen: list[Persona]) -> personas.Panel:
    return personas.Panel(personas.checked(list(chosen)))


STRATEGIES = ("whole", "focused", "single")  # single: the one-call control (clearside.static.single)
# bench/quality.py on SmolLM2-135M, 6 dev propositions: both strategies leave no garbage in what completes;
# "focused" completed 5/6 at a mean 62 s, "whole" 4/6 at 46 s (3/4 held out at 33 s). Too close on completion
# to pay 36% more time, so small models keep one call per agent.
SMALL_MODEL_STRATEGY = "whole"


def default_strategy(provider: Provider) -> str:
    """The strategy for this provider: the one measured best for small models when it declares itself small,
    otherwise one call per agent (larger models follow a whole-section instruction well)."""
    return SMALL_MODEL_STRATEGY if provider.small else "whole"


def merge_quality(earlier: dict[str, Any] | None, later: AgentQuality) -> AgentQuality:
    """One agent's record over several runs (e.g. each challenge): calls, re-asks and items add up."""
    if not earlier:
        return later
    before = AgentQuality.model_validate(earlier)
    return AgentQuality(attempts=before.attempts + later.attempts, reasks=before.reasks + later.reasks,
                        items=[*before.items, *later.items])


def notes(names: tuple[str, ...], run: DebateRun) -> str:
    """A document's ``meta.notes``: the prompt versions (``names``), whether it cites its sources, and what the
    reader must know from the agents' quality records (:func:`reader_notes`)."""
    listed = ", ".join(f"{name} {version}" for name, version in prompts.versions(*names).items())
    sources = run.sources
    if not sources:
        cited = "No citations requested."
    elif run.citations:
        cited = (f"Citations requested from {len(sources)} source(s) the user attached; every quote was checked "
                 "against its passage.")
    else:
        cited = f"{len(sources)} source(s) the user attached were shown to the advocates; no citations requested."
    said = [f"Prompt versions: {listed}. {cited}", *reader_notes(run.quality)]
    if run.quality:  # what the checks did, per agent (the Quality checks panel says the same)
        said.append(summary.in_words(run.quality, AGENT_NAMES))
    return " ".join(said)


def reader_notes(quality: Mapping[str, AgentQuality]) -> list[str]:
    """What the reader is told in ``meta.notes`` from the agents' quality records: each persona dropped and each
    side shipped with fewer arguments than asked for."""
    return [item.message for record in quality.values() for item in record.items
            if item.check == PERSONA_DROPPED or (item.check == "thin_side" and item.action == "flagged")]
