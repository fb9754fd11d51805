"""A live transcript as Markdown: phases, turns, interventions inline, guardrail flags and notes."""

from __future__ import annotations

import re

from . import costs
from .evidence import RULE as QUOTE_RULE
from .guardrails import argument_problem
from .protocol import PHASE_LABELS, SPEAKER_LABELS
from .transcript import EvidenceSource, Intervention, Transcript, Turn

TYPE_LABELS = {"pause_question": "Pause & question", "clarification": "Clarification request",
               "inject_evidence": "Evidence", "direct_question": "Direct question"}


_INLINE = re.compile(r"([\\`*_\[\]|~])")
_ENTITY = re.compile(r"&(?=#?\w+;)")  # "R&D" stays as it is; "&lt;" would be read as an entity
_BLOCK = re.compile(r"^(?:([#+=-])|(\d+)([.)]))")


def _md(text: str) -> str:
    """Plain text for Markdown: no markup, no HTML, no headings or lists from user or model text.

    Only what could start markup is escaped (emphasis, code, links, tables, strikethrough, and a heading or
    list marker at the start), and ``<``/``>`` become entities, so the file stays readable as text: a
    sentence keeps its full stops and hyphens as they are."""
    text = _INLINE.sub(r"\\\1", " ".join(str(text).split()))
    text = _ENTITY.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")
    return _BLOCK.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", text)


def source_label(source: EvidenceSource) -> str:
    """``report.pdf (S1; PDF, 12 pages, 48 KB)``: plain text, to be escaped where it is drawn."""
    size = f"{source.size / 1024:.0f} KB" if source.size >= 1024 else f"{source.size} bytes"
    pages = f", {source.pages} page{'s' if source.pages != 1 else ''}" if source.pages else ""
    return f"{source.name} ({source.ref}; {source.kind}{pages}, {size})"


def quote_label(quote: dict) -> str:
    """Where a turn's verified quote comes from: ``S1.3 of report.pdf, page 2`` (plain text)."""
    page = f", page {quote['page']}" if quote.get("page") else ""
    return f"{quote.get('passage', '')} of {quote.get('name', quote.get('source', ''))}{page}"


def flag_label(flag: dict) -> str:
    return "Quote check" if flag.get("rule") == QUOTE_RULE else "Guardrail"


def intervention_line(item: Intervention) -> str:
    target = f" to {SPEAKER_LABELS[item.to]}" if item.to else ""
    line = f"> **User · {TYPE_LABELS[item.type]}{target}** ({item.at}): {_md(item.text)}"
    if item.source is not None:
        line += f"  \n> File: {_md(source_label(item.source))}"
    if item.response:
        who = SPEAKER_LABELS.get(item.answered_by or "", "")
        line += f"  \n> **{who}:** {_md(item.response)}"
    if item.answered_in_turn:
        line += f"  \n> Clarified inline in turn {item.answered_in_turn}."
    if item.delivered_to:
        line += f"  \n> Delivered in turns {', '.join(map(str, item.delivered_to))}."
    if item.status == "queued":
        line += "  \n> Waiting for its point in the debate."
    if item.error:
        line += f"  \n> Could not be answered: {_md(item.error)}"
    return line


def _fields(turn: Turn) -> list[str]:
    f = turn.fields
    lines: list[str] = []
    for argument in f.get("arguments", []):
        problem = argument_problem(argument, turn.flags)  # a confidence the checks contradict is withheld
        confidence = f"confidence withheld: {_md(problem)}" if problem else f"{argument['confidence']} confidence"
        lines.append(f"- **{_md(argument['claim'])}** {_md(argument.get('explanation', ''))} "
                     f"({argument['category']}; {argument['evidence_type'].replace('_', ' ')}; "
                     f"{confidence}). Assumes: "
                     + "; ".join(_md(a) for a in argument.get("assumptions", [])))
    for pair in f.get("pairs", []):
        lines.append(f"- Q: {_md(pair['question'])}  \n  A: {_md(pair['answer'])}")
    for item in f.get("rebuttals", []):
        lines.append(f"- On \"{_md(item['target'])}\": {_md(item['response'])}")
    for key, label in (("assumptions", "Assumption"), ("uncertainties", "Uncertainty"), ("previews", "Preview"),
                       ("questions", "Question"), ("summary", "Summary"), ("disagreements", "Disagreement"),
                       ("decision_hinges", "Decision hinge"), ("evidence_gaps", "Evidence gap"),
                       ("areas_of_agreement", "Agreement")):
        if turn.kind in ("answer",) and key == "questions":
            continue
        lines += [f"- {label}: {_md(item)}" for item in f.get(key, []) if isinstance(item, str)]
    if isinstance(f.get("evidence_quote"), dict):
        quote = f["evidence_quote"]
        lines.append(f"- Quotes the user's source ({_md(quote_label(quote))}, verified word for word): "
                     f"“{_md(quote.get('quote', ''))}”")
    if f.get("evidence_response"):
        lines.append(f"- On the user's evidence: {_md(f['evidence_response'])}")
    return lines


def to_markdown(transcript: Transcript) -> str:
    proposition = (transcript.proposition or {}).get("normalized_question", transcript.question)
    lines = [f"# Live debate: {_md(proposition)}", "",
             f"Asked: {_md(transcript.question)}  ",
             f"Model: {_md(transcript.provider)}:{_md(transcript.model)} · state: {transcript.state} · "
             f"{len(transcript.turns)} turns · {len(transcript.interventions)} interventions", ""]
    by_turn: dict[int, list[Intervention]] = {}
    for item in transcript.interventions:
        by_turn.setdefault(item.after_turn, []).append(item)
    lines += [intervention_line(i) + "\n" for i in by_turn.get(0, [])]
    phase = ""
    for turn in transcript.turns:
        if turn.phase != phase and turn.phase != "clarification":
            phase = turn.phase
            lines += [f"## {PHASE_LABELS[phase]}", ""]
        lines += [f"### Turn {turn.turn} · {_md(turn.label)}", "", _md(turn.text), ""]
        lines += _fields(turn)
        for flag in turn.flags:
            lines.append(f"- ⚠ {flag_label(flag)} ({flag['rule']}): {_md(flag['detail'])}")
        for note in turn.notes:
            lines.append(f"- Note: {_md(note)}")
        lines.append("")
        lines += [intervention_line(i) + "\n" for i in by_turn.get(turn.turn, [])]
    if transcript.partial:
        lines += ["### Paused mid-turn", "", _md(transcript.partial.speech), ""]
    lines += costs.markdown(transcript)
    return "\n".join(lines).rstrip() + "\n"
