"""Runs a perspectives session: clarification, then rounds of A and B, then the synthesis.

Every step's output and every state change is saved in the store at once (kind
``perspectives``; the session id is the saved debate's id), so a crash loses at
most the step in flight and ``resume`` continues from the saved state. Events
(docs/design/perspectives.md#events) report each step: ``clarification_questions``, ``agent_output``
(with round and agent), ``synthesis``, ``error``, plus ``state`` and ``delta``
(streamed text) for the dashboard.

Context management: before a call, the assembled prompt is measured (about 3
characters a token) against the model's context. If it would not fit, earlier
output is condensed by the summarizer, oldest first, and each summary is kept
in ``session.summaries`` with what it replaced and why.
"""

from __future__ import annotations

from typing import Any

from .. import prompts
from ..checks import Embeddings, Review
from ..enforce import CallSpec, Listeners, run_structured
from ..errors import Cancelled, ClearSideError, ConfigError, InputError
from ..inputs import question as clean_question
from ..providers import Provider, Usage
from ..providers.retry import retrying_text
from ..runtime.events import Event, OnEvent
from ..store import NewDebate, Store
from . import agents, checks
from .session import MAX_SITUATION, RoundOutput, Session, Summary, allowed_next, check_rounds, round_state

KIND = "perspectives"
CHARS_PER_TOKEN = 3  # conservative for English prose in the small models' tokenizers
DEFAULT_CONTEXT = 8192


def _round(n: int | None) -> dict[str, Any]:
    """An event's round, where it has one (``data["round"]``)."""
    return {"round": n} if n is not None else {}


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN + 1


def load(store: Store, session_id: str) -> Session:
    record = store.get(session_id)
    if record.kind != KIND:
        raise InputError(f"{session_id} is a {record.kind} debate, not a perspectives session.")
    session = Session.model_validate((record.data or {})["session"])
    session.session_id = record.id  # a copy made in the Library carries its original's id in its data
    return session


class PerspectivesRun:
    def __init__(self, session: Session, provider: Provider, *, store: Store | None = None, retries: int = 2,
                 temperature: float = 0.7, context_tokens: int | None = None, on_event: OnEvent | None = None):
        self.session = session
        self.provider = provider
        self.store = store
        self.retries, self.temperature = retries, temperature
        self.context_tokens = context_tokens or getattr(provider, "n_ctx", None) or DEFAULT_CONTEXT
        self.on_event = on_event or (lambda event: None)
        self.embeddings = Embeddings()  # the clarifier's check: a question that hands the situation back
        session.provider = provider.spec

    # -- creating, resuming, saving -------------------------------------------------------------------------------

    @classmethod
    def create(cls, question: str, provider: Provider, *, rounds: int = 4, store: Store | None = None,
               observability: bool = True, parent_id: str | None = None, owner: str | None = None,
               **options: Any) -> PerspectivesRun:
        """A new session, saved at once; ``owner``: the starting browser's token (only it answers and steers)."""
        session = Session(original_user_prompt=clean_question(question, label="Situation", limit=MAX_SITUATION),
                          max_rounds=check_rounds(rounds), observability=observability)
        run = cls(session, provider, store=store, **options)
        if store is not None:
            store.create(NewDebate(KIND, session.original_user_prompt, provider=provider.name, model=provider.model,
                                   prompt_versions=prompts.versions("perspectives"),
                                   data={"session": run._dump(), **({"owner": owner} if owner else {})},
                                   status=session.status(), debate_id=session.session_id, parent_id=parent_id))
        return run

    @classmethod
    def resume(cls, session_id: str, provider: Provider, store: Store, **options: Any) -> PerspectivesRun:
        run = cls(load(store, session_id), provider, store=store, **options)
        run.session.error = ""
        return run

    def _dump(self) -> dict[str, Any]:
        return self.session.model_dump(mode="json")

    def save(self) -> None:
        if self.store is not None:
            self.store.update(self.session.session_id, status=self.session.status(), data={"session": self._dump()},
                              provider=self.provider.name, model=self.provider.model)

    def _enter(self, state: str) -> None:
        self.session.enter(state)
        self.save()
        self.on_event(Event("state", text=state))

    # -- one model call -------------------------------------------------------------------------------------------

    def _review(self, agent: str) -> Review | None:
        """The agent's substance checks (none for the summarizer): the clarifier's questions are dropped or
        re-asked; the perspectives' and the synthesis's text is dropped, re-asked, or at last kept and flagged."""
        if agent == "clarifier":
            check = checks.clarifier_check(self.session.original_user_prompt, self.embeddings)
            return Review(check, checks.CLARIFIER_FLOORS)
        if agent in checks.FIELDS:
            return checks.Flagging(checks.output_check(agent), checks.FLOORS[agent])
        return None

    def _call(self, agent: str, step: str, messages: list[dict[str, str]], *, round_: int | None = None,
              label: str | None = None) -> dict[str, Any]:
        _, model, wire, max_tokens = agents.AGENTS[agent]
        usage = Usage()
        review = self._review(agent)
        shown = label or agent
        try:
            if not self._fits(messages, agent):
                raise ConfigError(f"The {step} prompt needs about {estimate_tokens(messages) + max_tokens} tokens "
                                  f"but the model's context holds {self.context_tokens}: use a model with a larger "
                                  "context (for the embedded model, CLEARSIDE_N_CTX), fewer rounds or shorter "
                                  "answers.")
            result = run_structured(
                self.provider, CallSpec(f"perspectives-{agent}", model, wire, max_tokens=max_tokens,
                                        retries=self.retries, temperature=self.temperature),
                messages, review=review, usage=usage, listeners=Listeners(
                    on_delta=lambda text: self.on_event(Event("delta", shown, text, _round(round_))),
                    on_retrying=lambda data: self.on_event(Event("retrying", shown, retrying_text(data),
                                                                 _round(round_)))))
        except Cancelled:  # stopped by the user mid-reply: nothing of this step is kept, every earlier one is
            self.session.cancelled, self.session.error = True, ""
            self.save()
            raise
        except ClearSideError as exc:
            self.session.error = str(exc)
            self.save()
            self.on_event(Event("error", shown, str(exc), {"state": self.session.state, **_round(round_)}))
            raise
        self.session.calls.append({"step": step, "agent": agent, "calls": usage.calls,
                                   "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                                   "seconds": round(usage.seconds, 2)})
        if review is not None:
            self.session.quality[step] = review.record
        return agents.dump(result)

    def _fits(self, messages: list[dict[str, str]], agent: str) -> bool:
        return estimate_tokens(messages) + agents.AGENTS[agent][3] <= self.context_tokens

    def _summary(self, step: str, covers: list[str], label: str, text: str, reason: str) -> str:
        found = next((s for s in self.session.summaries if s.step == step and s.covers == covers), None)
        if found is None:  # a resumed session reuses what it already condensed
            output = self._call("summarizer", step, agents.summarize_messages(label, text), label="summarizer")
            found = Summary(step=step, covers=covers, text=output["summary"], reason=reason)
            self.session.summaries.append(found)
            self.save()
        return found.text

    # -- the steps ------------------------------------------------------------------------------------------------

    def clarify(self) -> list[str]:
        """INIT → CLARIFICATION_PENDING: the clarifier's questions (no reasoning yet)."""
        if self.session.state != "INIT":
            raise InputError(f"This session already has its clarification questions ({self.session.state}).")
        output = self._call("clarifier", "INIT", agents.clarify_messages(self.session.original_user_prompt))
        self.session.clarification_questions = output["questions"]
        self.session.error = ""
        self._enter("CLARIFICATION_PENDING")
        self.on_event(Event("clarification_questions", text="\n".join(output["questions"]),
                            data={"questions": output["questions"]}))
        return output["questions"]

    def answer(self, answers: str | list[str], skipped: list[int] | tuple[int, ...] = ()) -> None:
        """CLARIFICATION_PENDING → CLARIFICATION_COMPLETE: the merged prompt is fixed from here on. ``skipped``:
        the 1-based numbers of the questions the person skipped (the later agents are told so)."""
        self.session.merge(answers, skipped)
        self.save()
        self.on_event(Event("state", text="CLARIFICATION_COMPLETE", data={"skipped": self.session.skipped_questions}))

    def _expansion_messages(self, n: int) -> list[dict[str, str]]:
        merged = self.session.merged_user_prompt
        previous = self.session.output(n - 1, "B").text if n > 1 else None
        messages = agents.expansion_messages(merged, previous, n)
        if previous and not self._fits(messages, "A"):
            previous = self._summary(round_state(n, "A"), [f"B{n - 1}"], f"PERSPECTIVE B, ROUND {n - 1}", previous,
                                     f"A{n}'s prompt would need about {estimate_tokens(messages)} tokens of a "
                                     f"{self.context_tokens}-token context")
            messages = agents.expansion_messages(merged, previous, n)
        return messages

    def _compression_messages(self, n: int) -> list[dict[str, str]]:
        merged, expansion = self.session.merged_user_prompt, self.session.output(n, "A").text
        messages = agents.compression_messages(merged, expansion, n)
        if not self._fits(messages, "B"):
            expansion = self._summary(round_state(n, "B"), [f"A{n}"], f"PERSPECTIVE A, ROUND {n}", expansion,
                                      f"B{n}'s prompt would need about {estimate_tokens(messages)} tokens of a "
                                      f"{self.context_tokens}-token context")
            messages = agents.compression_messages(merged, expansion, n)
        return messages

    def _synthesis_messages(self) -> list[dict[str, str]]:
        s = self.session
        rounds: dict[int, str] = {}
        for o in s.round_outputs:
            rounds[o.round] = rounds.get(o.round, "") + f"[Round {o.round}, perspective {o.agent}]\n{o.text}\n\n"

        def assemble() -> list[dict[str, str]]:
            return agents.synthesis_messages(s.original_user_prompt, s.clarification_answers,
                                             "".join(rounds[n] for n in sorted(rounds)).strip())

        messages = assemble()
        for n in sorted(rounds):  # oldest first; the last round is condensed only if nothing else helps
            if self._fits(messages, "synthesis"):
                break
            reason = (f"the synthesis prompt would need about {estimate_tokens(messages)} tokens of a "
                      f"{self.context_tokens}-token context")
            text = self._summary("SYNTHESIS", [f"A{n}", f"B{n}"], f"ROUND {n}, PERSPECTIVES A AND B", rounds[n],
                                 reason)
            rounds[n] = f"[Round {n}, both perspectives, summarized]\n{text}\n\n"
            messages = assemble()
        return messages  # _call refuses it if even the summaries do not fit

    def _round_step(self, n: int, agent: str) -> None:
        messages = self._expansion_messages(n) if agent == "A" else self._compression_messages(n)
        output = self._call(agent, round_state(n, agent), messages, round_=n)
        text = agents.render(agent, output)
        self.session.round_outputs.append(RoundOutput(round=n, agent=agent, output=output, text=text))
        self.save()
        self.on_event(Event("agent_output", agent, text, {"output": output, "round": n}))

    def advance(self) -> bool:
        """One step from the saved state: the next model call (from INIT: the clarifier) and the state after it.
        True while steps remain; False once the session waits for its answers or is complete. A step done is
        never repeated (the durable runtime runs a session as one workflow step per call of this)."""
        s = self.session
        s.cancelled = False
        if s.state == "INIT":  # new, or the clarifier had failed or was cancelled: ask, then wait for the answers
            self.clarify()
            return False
        s.error = ""
        called = False
        while s.state != "COMPLETE" and not called:
            if s.state == "CLARIFICATION_PENDING":
                s.enter("CLARIFICATION_COMPLETE")  # raises: the gate cannot be skipped
            if s.state == "SYNTHESIS":
                if s.synthesis is None:
                    output = self._call("synthesis", "SYNTHESIS", self._synthesis_messages())
                    s.synthesis, called = output, True
                    self.save()
                    self.on_event(Event("synthesis", text=agents.render("synthesis", output),
                                        data={"output": output}))
            elif s.state != "CLARIFICATION_COMPLETE":
                n, agent = s.current_round, s.current_system_prompt
                if s.output(n, agent) is None:
                    self._round_step(n, agent)
                    called = True
            self._enter(allowed_next(s.state, s.max_rounds)[0])
        return s.state != "COMPLETE"

    def run(self) -> Session:
        """From the saved state to COMPLETE (from INIT: only to the questions); a step done is never repeated."""
        while self.advance():
            pass
        return self.session
