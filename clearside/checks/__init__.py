"""Substance checks: what the user reads must be traceable and neutral, not only schema-valid.

After an agent's reply passes the schema, :class:`Review` runs that agent's checks
(``proposition``, ``sides``, ``moderator``, ``challenge``), repairs what is safe to
repair (drop a duplicate, junk or ungrounded item while the contract's minimum still
holds; put the user's own question back), and sends the rest back to the model with
each check's message. Everything caught is written to the agent's
:class:`~clearside.schema.AgentQuality`, which the debate keeps as its quality record.

:func:`document_findings` runs the same checks over a finished document, for
``metrics`` and ``regress`` (garbage left in what the user reads).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..schema import AgentQuality, QualityItem
from . import challenge, moderator, proposition, sides
from .base import LEXICAL_ONLY, Embeddings, Finding, Outcome, capped, repair, value_at

# 1.1.0: ungrounded_domain; 1.2.0: a domain off the question's topic; 1.3.0: cut_sentence (ended at its
# last whole clause, else dropped or re-asked), code_soup, number_soup, empty_claim, assumption_repeats_claim,
# polarity_flip, echoed_question for "The premise is that ...", off_topic for moderator statements, and summary
# items judged beside the on-topic arguments only (SUMMARY_OFF_TOPIC 0.10 -> 0.20); 1.3.1: a string whose last
# sentence has no stop after one that has ("... other forms. The cost-s") is cut_sentence; 1.3.2: in a reply sent
# back, a string ended early is checked again as it now reads before it is kept (a verdict in it shipped); 1.3.3: a
# string the cap ended with no whole clause left is marked as cut ("... requires careful…"); 1.3.4: in a list, such a
# string's item goes while the list keeps its floor; 1.3.5: two codes with no word are code soup ("P3, C4"), an
# assumption id opening a moderator sentence is taken off, an uncertainty repeating an assumption goes; 1.3.6: a
# sentence ending on a modal or "be" whose phrase is not understood is cut ("... that they can"), talk about the
# debate instead of in it says nothing ("This is a very important topic."), an assumption or uncertainty about
# neither the proposition nor the arguments is off_topic; 1.3.7: a sentence of 100 characters or more without a
# stop is ended as if its length cap had ended it, and "is", "are", "such" need their phrase as the modals do;
# 1.4.0: a capped string with no whole clause is ended after its last word where it still reads whole (else marked
# or dropped as before), a summary item or moderator statement below QUESTION_FLOOR to the question is off_topic
# whatever the arguments share with it, and a preposition ending a wh-clause whose wh-word is its subject is a cut;
# 1.4.1: a passive that stops before its agent ("... will be influenced by.") is a cut; 1.4.2: a decision hinge
# that asks nothing specific ("What are your thoughts?") is a generic_question; 1.4.3: a moderator's topic or root
# cause that opens with a recommendation ("Government should cap rents") is kept as the open question it names
# ("Whether government should cap rents"), not sent back; 1.4.4: an assumption or uncertainty with nothing in common
# with the question (a similarity under 0) is off_topic however close it is to an argument's wording; 1.4.5: a
# sentence ending on "to" with no infinitive understood ("no other choice but to.") is a cut, and a string is
# never ended at a clause whose own last sentence is under three words or wants its object ("This includes.")
CHECKS_VERSION = "1.4.6"
M = TypeVar("M", bound=BaseModel)
Check = Callable[[dict[str, Any]], list[Finding]]


def quality_item(finding: Finding, action: str) -> QualityItem:
    """A finding as the quality record keeps it."""
    return _item(finding, action)


def _item(finding: Finding, action: str) -> QualityItem:
    text = (finding.text or "").strip()
    return QualityItem(check=finding.check, path=finding.where, message=finding.message, action=action,
                       **({"text": text[:300]} if text else {}))


class Review:
    """One agent's checks inside the enforcement loop, with the record of what they caught."""

    def __init__(self, check: Check, floors: dict[str, int], record: AgentQuality | None = None, *,
                 reasking: bool = False) -> None:
        """``record``: an agent record to add to (an agent that makes several calls, one per part);
        ``reasking``: every call of this review is a re-ask (it rewrites part of a reply that was sent back)."""
        self.reasking = reasking
        self.check = check
        self.floors = floors
        self.base = (record.attempts, record.reasks) if record else (0, 0)
        self.record = record or AgentQuality(attempts=1, reasks=0)
        self.calls = 0
        self.pool: dict[str, list[Any]] = {}  # list items that passed every check in earlier replies
        # after a reply is sent back: what in it passed (every flagged list item removed) and the fields that failed
        self.kept: dict[str, Any] = {}
        self.failing: dict[str, list[str]] = {}  # field -> the checks' messages on it
        # the strings of the reply under review that the decoder's length cap ended, by path (set per reply by
        # the enforcement loop: clearside.enforce.capped_strings)
        self.capped: dict[tuple, str] = {}

    def called(self) -> None:
        """One more model call for this agent (counted by the enforcement loop)."""
        self.calls += 1
        self.record.attempts = self.base[0] + self.calls
        self.record.reasks = self.base[1] + self.calls - (0 if self.reasking else 1)

    def repeats(self, dropped: list[tuple[str, Any]]) -> None:
        """Blank items and exact repeats the enforcement loop dropped from the reply's lists before the
        checks ran."""
        for path, item in dropped:
            if item == "":
                self.record.items.append(QualityItem(check="blank_item", path=path, action="dropped",
                                                     message=f"{path} held only whitespace"))
                continue
            text = item if isinstance(item, str) else (item.get("claim") if isinstance(item, dict) else None)
            self.record.items.append(QualityItem(check="exact_repeat", path=path, action="dropped",
                                                 message=f"{path} repeats an earlier item word for word",
                                                 **({"text": str(text)[:300]} if text else {})))

    SETTLE = 2  # re-checks after a repair (a summary point about a claim that was just dropped is caught next)

    def __call__(self, parsed: M, last_attempt: bool) -> tuple[M | None, list[str]]:
        """The reply with safe repairs made, or None and the messages for a re-ask.

        A list that would fall under its floor is first topped up with items that passed
        every check in an earlier reply of this agent (what already passed is kept), and
        the result is checked again as a whole; only if that fails too is the model re-asked.
        A repaired reply is checked again, since a drop can expose a new finding.
        """
        data, messages = self._review(parsed.model_dump(mode="json", exclude_none=True), last_attempt)
        if data is None:
            return None, messages
        context = data.get("context")
        if isinstance(context, dict) and not context:
            del data["context"]
        try:
            return type(parsed).model_validate(data), []
        except ValidationError as exc:  # repairs left a list under the contract's minimum: asked again, never a crash
            return None, [f"{'/'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]

    def findings(self, data: dict[str, Any]) -> list[Finding]:
        """The agent's checks on ``data``, and a cut for each string still as the length cap ended it."""
        found = self.check(data)
        seen = {f.path for f in found}
        for path, text in self.capped.items():
            try:
                value = value_at(data, path)
            except (KeyError, IndexError, TypeError):  # a repair took it out
                continue
            if (path not in seen and isinstance(value, str) and value.strip() == text.strip()
                    and (ended := capped(path, value)) is not None):
                found.append(ended)
        return found

    def _review(self, data: dict[str, Any], last_attempt: bool,
                depth: int = 0) -> tuple[dict[str, Any] | None, list[str]]:
        findings = self.findings(data)
        outcome = repair(data, findings, self.floors, last_attempt=last_attempt)
        if outcome.reask and all(f.repair == "drop" for f in outcome.reask):
            clean = repair(data, findings, dict.fromkeys(self.floors, 0), last_attempt=last_attempt).data
            pooled = self._pooled(clean)
            self._remember(clean)
            if pooled is not None:
                again = repair(pooled, self.findings(pooled), self.floors, last_attempt=last_attempt)
                if not again.reask:
                    self.record.items += [_item(f, "dropped") for f in findings if f.repair == "drop"]
                    self.record.items += [_item(f, action) for f, action in again.done]
                    return again.data, []
        elif outcome.reask:
            self._remember(repair(data, findings, dict.fromkeys(self.floors, 0), last_attempt=last_attempt).data)
        self.record.items += [_item(finding, action) for finding, action in outcome.done]
        if outcome.reask:
            self.record.items += [_item(finding, "reasked") for finding in outcome.reask if not last_attempt]
            self._keep(data, findings, outcome.reask)
            return None, [finding.message for finding in outcome.reask]
        if outcome.done and depth < self.SETTLE and self.findings(outcome.data):
            return self._review(outcome.data, last_attempt, depth + 1)
        return outcome.data, []

    def _keep(self, data: dict[str, Any], findings: list[Finding], reask: list[Finding]) -> None:
        """Remember what passed in a reply that goes back, so a caller may ask for only the failing fields. A
        string ended early stays, ended, and is checked again as it now reads (a verdict in its last whole
        sentence goes, and is recorded)."""
        self.kept = self._passed(data, findings).data
        found = list(findings)
        for _ in range(self.SETTLE):
            again = [f for f in self.findings(self.kept) if _holds(self.kept, f)]
            if not again:
                break
            outcome = self._passed(self.kept, again)
            self.kept = outcome.data
            self.record.items += [_item(f, action) for f, action in outcome.done]
            found += again
        self.failing = {}
        for finding in reask:
            self.failing.setdefault(str(finding.path[0]), []).append(finding.message)
        for field, floor in self.floors.items():  # a list the drops left under its floor is written again too
            if field in self.kept and len(self.kept[field]) < floor and field not in self.failing:
                self.failing[field] = [f.message for f in found if f.path[0] == field]

    def _passed(self, data: dict[str, Any], findings: list[Finding]) -> Outcome:
        """``data`` without any flagged list item or optional key; a text ended early stays, ended."""
        flagged = [dataclasses.replace(f, repair="drop") if f.repair != "replace" and isinstance(f.target[-1], int)
                   else f for f in findings]
        return repair(data, flagged, dict.fromkeys(self.floors, 0), last_attempt=False)

    POOL_FILL = 3  # a list topped up from earlier replies holds at most this many items

    def _remember(self, clean: dict[str, Any]) -> None:
        for field in self.floors:
            for item in clean.get(field, []):
                if item not in self.pool.setdefault(field, []):
                    self.pool[field].append(item)

    def _pooled(self, clean: dict[str, Any]) -> dict[str, Any] | None:
        """``clean`` with each list under its floor topped up from the pool, or None if the pool cannot."""
        merged, used = copy.deepcopy(clean), False
        for field, floor in self.floors.items():
            items = merged.setdefault(field, [])
            if len(items) < floor:
                extra = [item for item in self.pool.get(field, []) if item not in items]
                items += extra[: max(self.POOL_FILL - len(items), 0)]
                used = used or bool(extra)
                if len(items) < floor:
                    return None
        return merged if used else None


def _holds(data: dict[str, Any], finding: Finding) -> bool:
    """Whether ``finding`` still describes ``data``: its path is there and holds the text it quotes (a string, or
    one field of an item such as an argument's claim)."""
    try:
        value = value_at(data, finding.path)
    except (KeyError, IndexError, TypeError):
        return False
    if finding.text is None:
        return True
    return finding.text in value.values() if isinstance(value, dict) else value == finding.text


def this_year() -> int:
    return datetime.now(UTC).year


def document_findings(document: dict[str, Any], embeddings: Embeddings = LEXICAL_ONLY) -> list[tuple[str, Finding]]:
    """Every check over a finished v1 document, as (agent, finding); empty when it is clean."""
    prop = document["proposition"]
    quality = document.get("quality") or {}
    context = prop.get("context") or {}
    # Without a record of what the model inferred, every context value is held to the inferred rule.
    user_context = {k: v for k, v in context.items() if quality and k not in quality.get("inferred", [])}
    year = int(document["meta"]["generated_at"][:4])
    found = [("orchestrator", f) for f in proposition.check(prop, raw_input=prop["raw_input"],
                                                            user_context=user_context, year_now=year,
                                                            embeddings=embeddings)]
    question = prop["normalized_question"]
    for side in ("pro", "con"):
        found += [(side, f) for f in sides.check(document[side], question=question, raw_input=prop["raw_input"],
                                                 embeddings=embeddings)]
    found += [("moderator", f) for f in moderator.check(document["moderator"], pro=document["pro"],
                                                        con=document["con"], question=question,
                                                        embeddings=embeddings)]
    for i, response in enumerate((document.get("challenges") or {}).get("responses", [])):
        found += [(f"challenge {i + 1}", f) for f in challenge.check(response["response"], target=response["target"],
                                                                     embeddings=embeddings)]
    return found


__all__ = ["CHECKS_VERSION", "Embeddings", "Finding", "LEXICAL_ONLY", "Review", "challenge", "document_findings",
           "moderator", "proposition", "quality_item", "repair", "sides", "this_year"]
