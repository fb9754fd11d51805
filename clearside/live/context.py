"""What each live agent is shown: compact digests of the turns it may see, and its messages."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import prompts
from ..agents import context_block as agent_context_block
from ..schema import Context, Proposition
from .protocol import PHASE_LABELS, ROUND_TOPICS, ROUNDS, SPEAKER_LABELS, LiveConfig, Step
from .transcript import Turn

ROLES = {"pro": ("Pro Advocate", "FOR"), "con": ("Con Advocate", "AGAINST")}
SIDE_LINES = {"pro": "FOR the proposition. You argue that the answer is YES.",
              "con": "AGAINST the proposition. You argue that the answer is NO.",
              "moderator": "NEUTRAL. You take no side."}


def digest(turn: Turn) -> str:
    """One turn in a few lines: the structured content, which carries the substance compactly."""
    f, who = turn.fields, SPEAKER_LABELS.get(turn.speaker, turn.speaker)
    head = f"[Turn {turn.turn}] {turn.label}"
    if turn.kind == "opening":
        body = [f"Position: {f.get('position', '')}", *(f"Preview: {p}" for p in f.get("previews", [])),
                *(f"Assumption: {a}" for a in f.get("assumptions", []))]
    elif turn.kind == "constructive":
        body = [f"Argument [{a.get('category')}; {str(a.get('evidence_type', '')).replace('_', ' ')}; "
                f"{a.get('confidence')} confidence]: {a.get('claim')} Assumes: {'; '.join(a.get('assumptions', []))}"
                for a in f.get("arguments", [])]
        body += [f"Uncertainty: {u}" for u in f.get("uncertainties", [])]
    elif turn.kind == "question":
        body = [f"Q{i}: {q}" for i, q in enumerate(f.get("questions", []), 1)]
    elif turn.kind == "answer":
        body = [f"A{i}: {a}" for i, a in enumerate(f.get("answers", []), 1)]
    elif turn.kind == "rebuttal":
        body = [f"On \"{r.get('target')}\": {r.get('response')}" for r in f.get("rebuttals", [])]
    elif turn.kind == "closing":
        body = [*(f"Summary: {s}" for s in f.get("summary", [])),
                *(f"Disagreement: {d}" for d in f.get("disagreements", [])),
                *(f"Hinge: {h}" for h in f.get("decision_hinges", []))]
    else:
        body = [turn.text[:400]]
    if isinstance(f.get("evidence_quote"), dict):
        q = f["evidence_quote"]
        body.append(f"Quoted the user's source [{q.get('passage')}]: \"{q.get('quote')}\"")
    if f.get("evidence_response"):
        body.append(f"On the user's evidence: {f['evidence_response']}")
    return "\n".join([head, *(f"  {who}: {line}" for line in body if line)])


def visible_block(turns: list[Turn], limit: int | None = None) -> str:
    """The digests of ``turns``; with ``limit``, each is cut short so that together they fill at most ``limit``
    characters (the shortest stay whole, the longest are cut to one length)."""
    if not turns:
        return ""
    digests = [digest(t) for t in turns]
    if limit is not None:
        digests = [_cut(d, cap) for d, cap in zip(digests, _caps([len(d) for d in digests], limit), strict=True)]
    return "DEBATE TURNS YOU HAVE NOT SEEN YET (DATA):\n" + "\n".join(digests) + "\n"


def _caps(lengths: list[int], limit: int) -> list[int]:
    """Per-text caps summing to at most ``limit``: texts under the common cap keep their length."""
    if sum(lengths) <= limit:
        return lengths
    rest, left = sorted(lengths), max(limit, 0)
    for i, length in enumerate(rest):
        cap = left // (len(rest) - i)
        if length > cap:
            return [min(n, cap) for n in lengths]
        left -= length
    return lengths


def _cut(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    head = text[:max(cap - 1, 0)]
    return (head.rsplit(" ", 1)[0] if " " in head else head) + "…"


def conversation(speaker: str, turns: list[Turn]) -> list[dict[str, str]]:
    """The agent's own conversation so far: each of its planned turns as the message it got and its reply.

    Every new request extends it, so a backend that caches evaluated prompts by prefix (llama.cpp,
    Ollama, vLLM) only evaluates what is new.
    """
    messages = [system_message()]
    for turn in turns:
        if turn.speaker == speaker and turn.step is not None and turn.prompt:
            if turn.fresh:
                messages = [system_message()]
            messages += [{"role": "user", "content": turn.prompt}, *turn.rejected,
                         {"role": "assistant", "content": turn.reply}]
    return messages


def size(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def header(speaker: str, proposition: Proposition, first: bool) -> str:
    if not first:
        return ""
    return prompts.render(prompts.load("live").tasks["header"],
                          proposition=prompts.quote(proposition.normalized_question),
                          context_block=agent_context_block(proposition.context), role_block=role_block(speaker),
                          side_line=SIDE_LINES[speaker])


def system_message() -> dict[str, str]:
    """The same for every live call: a local model keeps its evaluated prefix from turn to turn."""
    return {"role": "system", "content": prompts.load("live").text}


def role_block(speaker: str) -> str:
    live = prompts.load("live")
    if speaker == "moderator":
        return live.tasks["moderator_system"]
    role, side = ROLES[speaker]
    return prompts.render(live.system, role=role, side=side)


def _task(step: Step, questions: int, assumptions: str = "") -> str:
    live = prompts.load("live")
    opponent = SPEAKER_LABELS.get(step.opponent, "")
    variables = {"opponent": opponent, "count": str(questions if step.kind == "answer" else
                                                    (1 if step.round == 2 else 2)),
                 "round": str(step.round), "topic": ROUND_TOPICS.get(step.round, ""),
                 "categories": " or ".join(ROUNDS.get(step.round, ())), "assumptions": assumptions}
    return prompts.render(live.tasks[step.kind], **variables)


@dataclass(frozen=True)
class TurnBrief:
    """What a planned turn's message carries besides the turns: the user's evidence as the agent is told it, the
    speech kept from before a pause (``prefix``), how many questions an answer takes, for the synthesis the
    sides' listed assumptions with their ids (``assumptions``), and the offered passages of the user's source
    files, to quote (``passages``: ``Quoting.block``)."""

    evidence: tuple[str, ...] = ()
    prefix: str = ""
    questions: int = 2
    assumptions: str = ""
    passages: str = ""


def turn_message(step: Step, proposition: Proposition, new_turns: list[Turn], config: LiveConfig,
                 brief: TurnBrief, *, first: bool, digest_chars: int | None = None) -> str:
    """The user message for one planned turn: the turns this agent has not seen yet and its task.

    ``digest_chars``: the characters the turns' digests may fill (``visible_block``), for a prompt the model's
    context could not hold."""
    live = prompts.load("live")
    words = config.budget_words(step)
    if brief.prefix:
        words = max(words - len(brief.prefix.split()), 10)
    evidence_text = (prompts.render(live.tasks["evidence"],
                                    items=" | ".join(prompts.quote(e) for e in brief.evidence))
                     if brief.evidence else "") + brief.passages
    continuation = (prompts.render(live.tasks["continuation"], prefix=prompts.quote(brief.prefix))
                    if brief.prefix else "")
    return prompts.render(
        live.user, header=header(step.speaker, proposition, first), phase=PHASE_LABELS[step.phase],
        label=step.label, visible=visible_block(new_turns, digest_chars), evidence=evidence_text,
        continuation=continuation,
        task=_task(step, brief.questions, brief.assumptions), words=str(words),
        tokens=str(math.ceil(words * config.tokens_per_word)), soft_words=str(round(words * config.soft_limit)),
        hard_words=str(round(words * config.hard_limit)))


def question_message(kind: str, speaker: str, proposition: Proposition, new_turns: list[Turn], question: str,
                     *, first: bool) -> str:
    """The user message asking an agent to answer the user: ``kind`` is user_answer or clarification."""
    return prompts.render(prompts.load("live").tasks[kind], header=header(speaker, proposition, first),
                          visible=visible_block(new_turns), question=prompts.quote(question))


def proposition_of(data: dict[str, Any] | None) -> Proposition | None:
    return Proposition.model_validate(data) if data else None


def context_of(values: dict[str, str]) -> Context | None:
    return Context(**values) if values else None
