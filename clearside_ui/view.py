"""Views of a debate document and of a running job. Every user or model string goes through ``esc``."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st

from clearside.agents import AGENT_ACTIVITIES, AGENT_NAMES, AGENT_ORDER
from clearside.enforce import partial_object
from clearside.errors import ConfigError
from clearside.schema import CATEGORY_VALUES, Document, Side, SourceInfo
from clearside.sources.citations import target as citation_target
from clearside.static.job import Snapshot
from clearside_ui import cruxes_view, scroll, sources_view
from clearside_ui.format import SIDES, bullets, esc, readable_title
from clearside_ui.state import App


# How often a page following a running debate redraws it (seconds). Each redraw costs every following tab a few
# hundredths of a CPU-second, on the viewer's machine, and the server one fragment run (bench/ui_load.py).
def _poll_seconds(value: str | None) -> float:
    try:
        seconds = float(value or 2.0)
    except ValueError:
        seconds = 0.0
    if not 0.5 <= seconds <= 60:
        raise ConfigError(f"CLEARSIDE_POLL_SECONDS is {value!r}: set it to a number of seconds from 0.5 to 60 "
                          "(default 2), or unset it.")
    return seconds


POLL_SECONDS = _poll_seconds(os.environ.get("CLEARSIDE_POLL_SECONDS"))


# -- Following a running job cheaply: poll slower while nothing changes, and rebuild only what changed.
#
# A page that follows a running job reruns a fragment on a timer (``st.fragment(run_every=...)``); every run costs
# the server a script run and every following tab a redraw. Two things keep that small:
#
# - **Back-off.** Each run hands :func:`poll_changed` a cheap fingerprint of what it shows (the status, the number of
#   progress rows or turns, the streamed text's length). After ``IDLE_RUNS`` runs in a row with the same
#   fingerprint the interval doubles, up to ``IDLE_MAX`` seconds (a queued job, a paused debate, a batch between
#   runs); the first change brings the page's own pace back. Streamlit takes a fragment's interval when the page
#   draws it, so a change of pace is one rerun of the page (a few per idle spell, against a run every second
#   saved); a rerun the user causes (a click, another page) starts again at the page's pace.
# - **Rebuild only what changed.** :func:`poll_cached` keeps a view's costly text (points parsed from a streamed reply)
#   per fingerprint: an unchanged fingerprint sends the same text again without parsing it, and the browser keeps
#   the element it has (Streamlit matches an unchanged element by its hash and does not draw it again). What does
#   not stream (the Live page's finished turns) is drawn outside the fragment, once per change.

IDLE_RUNS = 3  # unchanged runs in a row before the interval doubles
IDLE_MAX = 4.0  # seconds: the slowest pace (text after a silence appears within this); a slower page keeps its own
T = TypeVar("T")


@dataclass
class Pace:
    """One followed view's pace: ``see`` each run's fingerprint; True when the interval changed."""

    base: float
    interval: float = 0.0
    last: Hashable | None = None
    idle: int = 0
    seen: bool = False

    def __post_init__(self) -> None:
        self.interval = self.interval or self.base

    def see(self, fingerprint: Hashable) -> bool:
        if not self.seen or fingerprint != self.last:
            first = not self.seen
            self.seen, self.last, self.idle = True, fingerprint, 0
            if first or self.interval == self.base:
                return False
            self.interval = self.base  # something moves again: back to the page's pace
            return True
        self.idle += 1
        slowest = max(self.base, IDLE_MAX)
        if self.idle < IDLE_RUNS or self.interval >= slowest:
            return False
        self.idle, self.interval = 0, min(self.interval * 2, slowest)
        return True


def _keys(name: str) -> tuple[str, str]:
    return App.poll_pace(name), App.poll_repace(name)


def poll_every(name: str, base: float) -> float:
    """The interval to draw the fragment ``name`` with on this page run (call it where the page draws it).

    A run the pace asked for (:func:`poll_changed` returned after a change of pace) keeps the pace; any other run (a
    click, a page change, a reload) starts again at ``base`` with a fresh fingerprint."""
    pace_key, repace_key = _keys(name)
    pace = st.session_state.get(pace_key)
    if not st.session_state.pop(repace_key, False) or not isinstance(pace, Pace) or pace.base != base:
        pace = Pace(base)
    else:  # the run the pace asked for: the fragment's first run in it is its baseline, not a change
        pace = Pace(base, pace.interval, pace.last, 0, pace.seen)
    st.session_state[pace_key] = pace
    return pace.interval


def poll_changed(name: str, fingerprint: Hashable) -> None:
    """Record one fragment run's fingerprint; when the pace changes, rerun the page so the fragment takes it.

    Called at the top of the fragment, before it draws anything (a page rerun discards this run)."""
    pace_key, repace_key = _keys(name)
    pace = st.session_state.get(pace_key)
    if not isinstance(pace, Pace):
        return  # drawn without :func:`poll_every` (a test calling the view directly): a fixed pace
    if pace.see(fingerprint):
        st.session_state[repace_key] = True
        st.rerun()


def follow(name: str, base: float, body: Callable[..., None], *args: Any) -> None:
    """Draw ``body(*args)`` as a fragment that reruns every ``base`` seconds, slower while it reports no change
    (``body`` calls :func:`poll_changed` with ``name`` first)."""
    st.fragment(run_every=poll_every(name, base))(body)(*args)


def poll_cached(name: str, fingerprint: Hashable, make: Callable[[], T]) -> T:
    """``make()``, or the value it gave for the same ``name`` and ``fingerprint`` last time (one kept per name)."""
    key = App.poll_cache(name)
    kept = st.session_state.get(key)
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == fingerprint:
        return kept[1]
    value = make()
    st.session_state[key] = (fingerprint, value)
    return value


STATUS_ICONS = {"pending": "○", "waiting": "◔", "running": "◐", "retrying": "↻", "done": "✓", "failed": "✗"}
# "waiting": the agent has started, but the model has not written its first token (a model that serves one
# request at a time, such as the embedded one, is still writing the other side)
STATUS_WORDS = {"waiting": "waiting for the model"}
ACTION_LABELS = {"question_assumption": "Question an assumption",
                 "stronger_counterargument": "Ask for stronger counterargument",
                 "evidence_that_changes_outcome": "What evidence would change this?",
                 "question_source": "Is this source reliable for this claim?"}
CLASS_LABELS = {"factual": "factual", "uncertain": "uncertain", "values_dependent": "values-dependent"}


def activity(agent: str) -> str:
    """What an agent is doing, as a line of the progress starts: ``Writing the case FOR``."""
    words = AGENT_ACTIVITIES[agent]
    return words[:1].upper() + words[1:]


def responses_by_target(document: Document) -> dict[str, list[Any]]:
    """Each target's challenge responses, as (position in the document's list, response)."""
    by_target: dict[str, list[Any]] = defaultdict(list)
    for number, response in enumerate(document.challenges.responses):
        by_target[response.target.casefold()].append((number, response))
    return by_target


def challenge_anchor(number: int) -> str:
    return f"cs-challenge-{number}"


def _challenge_notes(target: str, responses: dict[str, list[Any]]) -> None:
    for number, response in responses.get(target.casefold(), []):
        scroll.anchor(challenge_anchor(number))
        body = response.response
        with st.expander(f"Challenge · {ACTION_LABELS[response.action]} · {CLASS_LABELS[body.classification]}",
                         expanded=True):
            st.markdown(f"**Classification:** {CLASS_LABELS[body.classification]}")
            st.markdown("**Analysis and dependencies**\n\n" + bullets(body.analysis))
            if body.historical_context:
                st.markdown("**Historical context**\n\n" + bullets(body.historical_context))
            if body.citations:  # a challenge of a citation: the sentences of the passage the answer discusses
                st.markdown("**Quotes the passage**\n\n" + "\n".join(
                    f"- `[{c.passage}]` :orange-background[{esc(c.quote)}]" for c in body.citations))


Control = Callable[[str], None]  # draws the challenge offered beside an element, given the element's text


def _element_notes(target: str, responses: dict[str, list[Any]], control: Control | None) -> None:
    """Under an element: the challenge offered for it (where the page offers one), then its answers."""
    if control is not None:
        control(target)
    _challenge_notes(target, responses)


def side_view(side: Side, title: str, colour: str, responses: dict[str, list[Any]],
              sources: list[SourceInfo] | None = None, control: Control | None = None) -> None:
    """One advocate's case; ``sources``: the document's sources, whose passages the citations open; ``control``:
    the challenge drawn beside each argument and assumption (none: the document is read-only here)."""
    cited = sources_view.passages(sources)
    st.markdown(f"### :{colour}[{title}]")
    st.markdown("**Executive summary**\n\n" + bullets(side.executive_summary))
    for category in CATEGORY_VALUES:
        arguments = [a for a in side.arguments if a.category == category]
        if not arguments:
            continue
        st.markdown(f"**{category.capitalize()}**")
        for argument in arguments:
            st.markdown(f"- **{esc(argument.claim)}**{sources_view.markers(argument)} {esc(argument.explanation)}  \n"
                        + (f"  :violet-badge[{esc(argument.persona)}]" if argument.persona else "")  # persona debates
                        + f"  :blue-badge[{argument.evidence_type.replace('_', ' ')}] "
                        f":gray-badge[confidence: {argument.confidence}]{sources_view.badge(argument)}")
            sources_view.citations(argument, cited)  # each marker opens the passage it quotes
            _element_notes(argument.claim, responses, control)
            for citation in argument.citations or []:  # a challenged citation's answers, under its claim
                _challenge_notes(citation_target(citation), responses)
    st.markdown("**Assumptions**")
    for assumption in side.assumptions:
        st.markdown(f"- {esc(assumption)}")
        _element_notes(assumption, responses, control)
    st.markdown("**Uncertainties**\n\n" + bullets(side.uncertainties))


def moderator_view(document: Document, responses: dict[str, list[Any]], control: Control | None = None) -> None:
    mod = document.moderator
    st.markdown("### :gray[MODERATOR SYNTHESIS]")
    st.caption("No verdict: the moderator maps the disagreement and never picks a winner.")
    st.markdown("**Areas of agreement**\n\n" + bullets(mod.areas_of_agreement))
    st.markdown("**Core disagreements**")
    for item in mod.core_disagreements:
        root = f"  \n  *Root cause:* {esc(item.root_cause)}" if item.root_cause else ""
        st.markdown(f"- **{esc(readable_title(item.topic, item.description))}**: {esc(item.description)}{root}")
    st.markdown("**Assumption conflicts**")
    for conflict in mod.assumption_conflicts:
        why = f"  \n  *Why:* {esc(conflict.conflict_description)}" if conflict.conflict_description else ""
        st.markdown(f"- FOR assumes: {esc(conflict.pro_assumption)}  \n  AGAINST assumes: "
                    f"{esc(conflict.con_assumption)}{why}")
    st.markdown("**Evidence gaps**\n\n" + bullets(mod.evidence_gaps))
    st.markdown("**Decision hinges**")
    if cruxes_view.hinges_view(document, lambda hinge: _element_notes(hinge, responses, control)):  # by load
        return
    for number, hinge in enumerate(mod.decision_hinges, 1):
        st.markdown(f"{number}\\. {esc(hinge)}")
        _element_notes(hinge, responses, control)


def context_parts(document: Document) -> list[str]:
    """``Geography: United States`` and so on; a value the model inferred (``quality.inferred``) says so."""
    prop = document.proposition
    context = prop.context.dump() if prop.context else {}
    inferred = set(document.quality.inferred) if document.quality else set()
    return [f"{k.capitalize()}: {esc(v)}" + (" (inferred)" if k in inferred else "") for k, v in context.items()]


def document_view(document: Document, *, level: int = 2, control: Control | None = None) -> None:
    """The question (a heading of ``level``: 2 under a page's title, drawn as large as an h4: clearside_ui/a11y.py),
    its context line, the three columns and challenges on elements the columns do not show; ``control`` draws the
    challenge offered beside each argument, assumption and hinge (a debate the user may challenge)."""
    prop = document.proposition
    st.markdown(f"{'#' * level} {esc(prop.normalized_question)}")
    meta = document.meta
    st.caption(" · ".join([f"Asked: {esc(prop.raw_input)}", *context_parts(document),
                           f"Model: {esc(meta.model_info.provider)}:{esc(meta.model_info.model)}",
                           f"Overall confidence: {meta.confidence_level}"]))
    responses = responses_by_target(document)
    columns = st.columns(3, gap="medium")
    for column, (side, title, colour) in zip(columns, SIDES, strict=False):  # FOR, AGAINST, then the moderator
        with column.container(border=True):
            side_view(getattr(document, side), title, colour, responses, document.sources, control)
    with columns[2].container(border=True):
        moderator_view(document, responses, control)
    targets = {t.casefold() for t in challenge_targets(document)}
    for number, response in enumerate(document.challenges.responses):
        if response.target.casefold() not in targets:
            st.markdown(f"**Challenge on:** {esc(response.target)}")
            _challenge_notes(response.target, {response.target.casefold(): [(number, response)]})


def sections_view(sections: dict[str, Any], *, level: int = 2) -> None:
    """The sections of an unfinished debate that did finish, each as the full view shows it."""
    proposition = sections.get("proposition")
    if proposition:
        st.markdown(f"{'#' * level} {esc(proposition['normalized_question'])}")
    sides = [(name, title, colour) for name, title, colour in SIDES if name in sections]
    for column, (name, title, colour) in zip(st.columns(2, gap="medium"), sides, strict=False):
        with column.container(border=True):
            side_view(Side.model_validate(sections[name]), title, colour, {})
    waiting = [activity("orchestrator" if n == "proposition" else n).lower()
               for n in ("proposition", "pro", "con", "moderator") if n not in sections]
    if waiting:
        st.caption("Not finished yet: " + "; ".join(waiting) + ".")


def challenge_targets(document: Document) -> dict[str, str]:
    """Every element a user can challenge, as text → label."""
    targets: dict[str, str] = {}
    for side, label in ((document.pro, AGENT_NAMES["pro"]), (document.con, AGENT_NAMES["con"])):
        for assumption in side.assumptions:
            targets.setdefault(assumption, f"{label} assumption: {assumption}")
        for argument in side.arguments:
            targets.setdefault(argument.claim, f"{label} claim: {argument.claim}")
            for citation in argument.citations or []:
                targets.setdefault(citation_target(citation), f"{label} citation [{citation.passage}] for "
                                                              f"“{argument.claim}”: {citation.quote}")
    for hinge in document.moderator.decision_hinges:
        targets.setdefault(hinge, f"Decision hinge: {hinge}")
    return targets


def citation_targets(document: Document) -> set[str]:
    """The challenge targets that are citations (they also take "Is this source reliable for this claim?")."""
    return {citation_target(c) for side in (document.pro, document.con) for a in side.arguments
            for c in a.citations or []}


ADVOCATE_POINTS = ("executive_summary", "arguments")  # what an advocate's column shows as it streams
PERSONA_POINTS = ("arguments_for", "arguments_against")  # what a persona's column shows (personas_view.progress)
STREAMED = ("pro", "con")  # the agents whose streamed points progress_view shows


def _partial_points(text: str, keys: tuple[str, ...] = ADVOCATE_POINTS) -> dict[str, list[str]]:
    """The points under each of ``keys`` of a reply still being streamed: a list's strings, and its objects'
    claims (an advocate's summary and arguments, a persona's arguments for and against)."""
    data = partial_object(text)
    points: dict[str, list[str]] = {}
    for key in keys:
        items = data.get(key)
        points[key] = [item if isinstance(item, str) else item["claim"]
                       for item in (items if isinstance(items, list) else [])
                       if isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("claim"), str))]
    return points


def points_keys(agent: str) -> tuple[str, ...]:
    """The lists of an agent's streamed reply the Debate page shows as they grow (none: it shows only a line)."""
    if agent in STREAMED:
        return ADVOCATE_POINTS
    return PERSONA_POINTS if agent.startswith("persona-") else ()


def progress_fingerprint(snap: Snapshot) -> tuple:
    """What :func:`progress_view` and ``personas_view.progress`` show: each agent's status line, and the points
    streamed by the advocates or by a persona debate's personas. Only what the page shows: while the orchestrator
    or the moderator writes, nothing on the page moves, so the follower backs off (a moderator's reply is not
    shown until it is done)."""
    lines = tuple((a, p.status, p.attempts, p.parts, round(p.seconds, 1) if p.status == "done" else None)
                  for a, p in snap.agents.items())
    points = tuple((a, tuple(tuple(shown) for shown in streamed_points(a, p.text, keys).values()))
                   for a, p in snap.agents.items() if (keys := points_keys(a)))
    return (snap.status, lines, points)


def streamed_points(agent: str, text: str, keys: tuple[str, ...] = ADVOCATE_POINTS) -> dict[str, list[str]]:
    """The points under ``keys`` parsed from an agent's streamed reply, parsed again only when the reply grew or
    restarted (its length, head or tail changed: a re-ask or a mend starts the stream afresh)."""
    return poll_cached(f"points_{agent}", (keys, len(text), text[:64], text[-64:]),
                       lambda: _partial_points(text, keys))


def attempt_words(progress: Any) -> str:
    """`` (2/3)… HTTP 503`` while a provider call is retried, `` (attempt 2)`` after a re-ask, else nothing."""
    if progress.status == "retrying" and progress.limit:
        cause = f": {esc(progress.cause[:160])}" if progress.cause else ""
        return f" ({progress.attempts}/{progress.limit})…{cause}"
    return f" (attempt {progress.attempts})" if progress.attempts > 1 else ""


def progress_view(snap: Snapshot) -> None:
    st.markdown("**Analyzing both sides...**")
    for agent in AGENT_ORDER:
        progress = snap.agents[agent]
        extra = attempt_words(progress)
        done = f" — {progress.seconds:.1f} s" if progress.status == "done" else ""
        status = STATUS_WORDS.get(progress.status, progress.status)
        st.markdown(f"{STATUS_ICONS[progress.status]} {activity(agent)}: {status}{extra}{done}")
    columns = st.columns(2)
    for column, agent in zip(columns, STREAMED, strict=True):
        title = AGENT_NAMES[agent]
        points = [point for shown in streamed_points(agent, snap.agents[agent].text).values() for point in shown]
        if points:
            column.markdown(f"**{title} (streaming)**\n\n" + bullets(points))
