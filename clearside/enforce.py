"""Structured output enforcement (docs/design/agents.md#enforcement).

Each call is constrained by the agent's wire schema where the provider can do
that, then parsed and validated twice: against the wire schema (shape and item
counts) and against the contract model. A violation is logged as a structured
record and the model is re-asked with the errors; after the last attempt a
:class:`SchemaViolationError` carries the raw output. A schema-valid reply then
passes the agent's substance checks (``review``, see :mod:`clearside.checks`):
safe repairs are made in place, anything else is re-asked with the checks'
messages, and :class:`QualityCheckError` is raised after the last attempt.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from . import prompts
from .checks import Check, Review
from .errors import QualityCheckError, SchemaViolationError
from .providers import ChatRequest, OnDelta, Provider, Usage
from .providers.base import OnRetrying, retry_notices

log = logging.getLogger("clearside.violations")
M = TypeVar("M", bound=BaseModel)

REASK_HEAT = 0.3
# A small model (Provider.small) writes gibberish from a temperature of about 0.9: its re-asks warm up gently.
SMALL_REASK_HEAT = 0.15
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def parse_json(text: str) -> Any:
    """The JSON object in a reply; tolerates code fences and raw newlines inside strings."""
    body = _FENCE.sub("", text.strip())
    if not body.startswith("{"):
        start = body.find("{")
        if start < 0:
            raise ValueError("the reply is not JSON: it contains no object")
        body = body[start:]
    try:
        return json.loads(body, strict=False)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:  # a reply nested a thousand levels deep: refused like any other malformed reply
        raise ValueError("the reply is not valid JSON: it is nested too deeply") from None


def partial_object(text: str) -> dict[str, Any]:
    """The JSON object in a reply still being streamed (or cut short): complete values only, plus a
    trailing unfinished string; ``{}`` when there is no object yet."""
    try:
        data = pydantic_core.from_json(text.strip(), allow_partial="trailing-strings")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def tidy(value: Any, dropped: list[tuple[str, Any]] | None = None, path: str = "") -> Any:
    """Collapse whitespace in every string and drop blank strings and exact duplicates from lists (each
    one, with its path, is added to ``dropped`` when given; a blank one as "")."""
    if isinstance(value, str):
        return _SPACE.sub(" ", value).strip()
    if isinstance(value, dict):
        return {key: tidy(item, dropped, f"{path}/{key}".lstrip("/")) for key, item in value.items()}
    if isinstance(value, list):
        seen: set[str] = set()
        kept = []
        for index, item in enumerate(value):
            item = tidy(item, dropped, f"{path}/{index}")
            if item == "":  # whitespace that passed the wire's minLength
                if dropped is not None:
                    dropped.append((f"{path}/{index}", item))
                continue
            key = json.dumps(item, sort_keys=True).casefold()
            if key not in seen:
                seen.add(key)
                kept.append(item)
            elif dropped is not None:
                dropped.append((f"{path}/{index}", item))
        return kept
    return value


def wire_errors(data: Any, schema: dict[str, Any]) -> list[str]:
    from .contract import draft202012  # jsonschema on first use (see there)

    errors = sorted(draft202012()(schema).iter_errors(data), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]


def model_errors(exc: ValidationError) -> list[str]:
    return [f"{'/'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in exc.errors()]


_CLOSE = {"{": "}", "[": "]"}


def close_cut(raw: str) -> str | None:
    """A reply its token limit cut off mid-JSON ("Unterminated string ..."), ended after its last complete value
    with its open objects and lists closed; what was cut mid-way (the last string, item or member) is left out, and
    the result is then checked like any reply. None when nothing complete came before the cut (or it was not cut).
    """
    start = raw.find("{")
    if start < 0:
        return None
    stack: list[str] = []
    in_string = escaped = False
    ends: tuple[int, tuple[str, ...]] | None = None  # (where the last complete value ended, the open containers)
    for i in range(start, len(raw)):
        char = raw[i]
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in _CLOSE:
            stack.append(char)
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
            if not stack:
                return None  # the object is whole: nothing was cut
            ends = (i + 1, tuple(stack))
        elif char == ",":
            ends = (i, tuple(stack))
    if ends is None:
        return None
    at, still_open = ends
    return raw[start:at] + "".join(_CLOSE[c] for c in reversed(still_open))


def check(text: str, model: type[M], schema: dict[str, Any] | None,
          prepare: Callable[[Any], Any] | None = None,
          dropped: list[tuple[str, Any]] | None = None) -> tuple[M | None, list[str]]:
    """Parse and validate one reply; returns the model or the list of errors. Exact repeats that were
    dropped from its lists are added to ``dropped``."""
    try:
        data = parse_json(text)
    except ValueError as exc:
        return None, [str(exc)]
    errors = wire_errors(data, schema) if schema else []
    if errors:
        return None, errors
    data = tidy(data, dropped)  # after the shape check, so dropping a repeated item never fails a reply
    try:
        return model.model_validate(prepare(data) if prepare else data), []
    except ValidationError as exc:
        return None, model_errors(exc)


def capped_strings(data: Any, schema: dict[str, Any] | None, path: tuple = ()) -> dict[tuple, str]:
    """The strings of a reply that its decoding schema's length cap ended, by path: with a pattern (a small model's
    sentence grammar, :func:`clearside.providers.small_schema.compact`) one character more (before the last) no
    longer matches it; with ``maxLength`` alone, the string is that long. The model did not choose to end them:
    the cap fell, most often mid-sentence."""
    if not isinstance(schema, dict):
        return {}
    if isinstance(data, dict):
        properties = schema.get("properties") or {}
        return {found: text for key, value in data.items()
                for found, text in capped_strings(value, properties.get(key), (*path, key)).items()}
    if isinstance(data, list):
        return {found: text for i, value in enumerate(data)
                for found, text in capped_strings(value, schema.get("items"), (*path, i)).items()}
    if not isinstance(data, str) or schema.get("type") != "string" or "enum" in schema:
        return {}
    if pattern := schema.get("pattern"):  # one more character before the last (a "?" may close the pattern)
        try:
            capped = bool(re.fullmatch(pattern, data)) and not re.fullmatch(pattern, f"{data[:-1]}x{data[-1:]}")
        except re.error:
            return {}
    else:
        capped = "maxLength" in schema and len(data) >= int(schema["maxLength"])
    return {path: data} if capped else {}


def reask_message(errors: list[str], *, substance: bool = False) -> dict[str, str]:
    listed = "\n".join(f"- {error}" for error in errors[:12])
    opening = "Your JSON has the right shape, but" if substance else "Your JSON broke the required format:"
    if substance:
        opening += " some of its content has to change:"
    return {"role": "user", "content": f"{opening}\n{listed}\n"
                                       "Reply again with only the corrected JSON object."}


# A failing item quoted in a check's message, "argument 2 ('A neuza jeste dorju ...') is not about ...": the user's
# error message keeps it, but a re-ask that shows it to a small model primes the model to write more of the same.
_QUOTED_ITEM = re.compile(r"""\s*\((['"]).{25,}?\1\)""")


def unquoted(problem: str) -> str:
    """A check's message without the failing item it quotes (short quotes, such as a verdict's phrase, stay)."""
    return _QUOTED_ITEM.sub("", problem)


def with_fixes(messages: list[dict[str, str]], problems: list[str]) -> list[dict[str, str]]:
    """``messages`` with what to fix added to their last (user) message: a re-ask that does not show the
    model its failed reply (the global prompt's ``fix`` task), nor the failing items its checks quote."""
    if not problems:
        return list(messages)
    listed = "\n".join(f"- {unquoted(p)}" for p in problems[:12])
    fix = prompts.render(prompts.load("global").tasks["fix"], problems=listed)
    *head, last = messages
    return [*head, {**last, "content": f"{last['content']}\n{fix}"}]


@dataclass(frozen=True)
class CallSpec(Generic[M]):
    """One structured call: what the agent is asked to return, how it is sampled, and how its reply is checked.

    ``schema``: the wire schema replies are validated against; ``decode``: a tighter one to decode with (e.g. an
    enum of indexes only); ``retries``: re-asks after the first attempt; ``prepare``: turns a parsed reply into the
    contract model's input; ``salvage``: may repair a reply that failed to parse (e.g. one cut at the token limit),
    the repaired text must still pass every check. ``check`` and ``floors``: the agent's substance checks on a
    schema-valid reply and the least items each list keeps (the caller builds the call's :class:`Review` from them,
    as ``Engine.call`` does). ``mend``: when a schema-valid reply fails its substance checks, instead of asking for
    the whole reply again, ``mend(review)`` writes only ``review.failing`` and keeps ``review.kept`` (e.g. one
    argument or one synthesis field per call); it raises like :func:`run_structured`.
    """

    agent: str
    model: type[M]
    schema: dict[str, Any]
    decode: dict[str, Any] | None = None
    max_tokens: int = 1024
    retries: int = 2
    temperature: float = 0.4
    prepare: Callable[[Any], Any] | None = None
    salvage: Callable[[str], str | None] | None = None
    check: Check | None = None
    floors: dict[str, int] | None = None
    mend: Callable[[Review], M] | None = None


@dataclass(frozen=True)
class Listeners:
    """Who hears of a structured call as it runs (each optional).

    ``on_delta``: each piece of text as it streams. ``on_retry(attempt, errors)``: a re-ask, with the errors of the
    reply it replaces. ``on_retrying``: each provider retry (an HTTP 429/5xx, a timeout, a dropped stream: see
    providers/retry.py) with its attempt, attempts, cause and wait; giving it also lets a stream cut mid-way be
    asked again, so it must drop the text streamed so far (the engine's "retry" event does).
    """

    on_delta: OnDelta | None = None
    on_retry: Callable[[int, list[str]], None] | None = None
    on_retrying: OnRetrying | None = None


def run_structured(provider: Provider, call: CallSpec[M], messages: list[dict[str, str]], *,
                   review: Review | None = None, usage: Usage | None = None,
                   violations: list[dict[str, Any]] | None = None, listeners: Listeners = Listeners()) -> M:
    """Ask ``call.agent`` until its reply validates, at most ``1 + call.retries`` times.

    ``review`` runs the agent's substance checks on a schema-valid reply (safe repairs in place, the rest re-asked
    or mended, see :class:`CallSpec`); ``usage`` adds up the tokens and attempts; ``violations`` collects a record
    of each rejected reply (each is also logged). A provider fault that outlasts the provider's retries is raised
    as it is (a ProviderError): it is never re-asked here as an invalid reply.
    """
    conversation = list(messages)
    raw, errors = "", []
    attempts = 1 + max(call.retries, 0)
    decode_schema = provider.constrain(call.decode or call.schema) if provider.supports_schema else None
    substance = False
    for attempt in range(1, attempts + 1):
        request = ChatRequest(messages=conversation, schema=decode_schema, agent=call.agent,
                              temperature=_heat(provider, call.temperature, attempt), max_tokens=call.max_tokens)
        raw = _complete(provider, request, attempt, review, usage, listeners)
        parsed, errors, substance = _read(call, raw, review, last=attempt == attempts,
                                          decoded=decode_schema or call.decode or call.schema)
        if parsed is not None:
            return parsed
        _violation(provider, call.agent, attempt, errors, raw, substance, violations)
        if attempt < attempts:
            if listeners.on_retry:
                listeners.on_retry(attempt + 1, errors)
            if substance and call.mend is not None and review.failing:
                return call.mend(review)
            conversation = _reasked(provider, messages, raw, errors, substance)
    raise (QualityCheckError if substance else SchemaViolationError)(call.agent, attempts, errors, raw,
                                                                     provider.describe())


def _heat(provider: Provider, temperature: float, attempt: int) -> float:
    """The temperature of an attempt: each re-ask samples a little hotter (at the same temperature a small model
    tends to repeat its reply)."""
    step = SMALL_REASK_HEAT if provider.small else REASK_HEAT
    return min(temperature + step * (attempt - 1), 1.2) if attempt > 1 else temperature


def _complete(provider: Provider, request: ChatRequest, attempt: int, review: Review | None, usage: Usage | None,
              listeners: Listeners) -> str:
    """One attempt's reply, counted on the review and the usage."""
    with retry_notices(listeners.on_retrying):
        completion = provider.complete(request, listeners.on_delta)
    if review is not None:
        review.called()
    if usage is not None:
        usage.add(completion)
        usage.attempts.append({"attempt": attempt, "seconds": round(completion.seconds, 3),
                               "completion_tokens": completion.completion_tokens})
    return completion.text


def _read(call: CallSpec[M], raw: str, review: Review | None, *, last: bool,
          decoded: dict[str, Any] | None = None) -> tuple[M | None, list[str], bool]:
    """``(model or None, errors, whether the substance checks judged it)``: the reply parsed and validated (salvaged
    when it failed to parse and ``call.salvage`` can repair it), then reviewed for substance, the strings its
    decoding schema (``decoded``) cut at their length cap among what the checks look at."""
    repeats: list[tuple[str, Any]] = []
    parsed, errors = check(raw, call.model, call.schema, call.prepare, repeats)
    salvage = call.salvage or close_cut  # a reply cut at its token limit keeps what it completed
    if parsed is None and (repaired := salvage(raw)) is not None:
        repeats = []
        parsed = check(repaired, call.model, call.schema, call.prepare, repeats)[0]
    substance = parsed is not None and review is not None
    if substance:
        review.repeats(repeats)
        try:
            review.capped = capped_strings(parse_json(raw), decoded)
        except ValueError:  # a salvaged reply: what was cut is already gone
            review.capped = {}
        parsed, errors = review(parsed, last)
    return parsed, errors, substance


def _violation(provider: Provider, agent: str, attempt: int, errors: list[str], raw: str, substance: bool,
               violations: list[dict[str, Any]] | None) -> None:
    """Record and log a rejected reply."""
    record = {"agent": agent, "attempt": attempt, "errors": errors, "raw": raw, "provider": provider.spec,
              "kind": "substance" if substance else "schema"}
    if violations is not None:
        violations.append(record)
    log.warning(json.dumps(record, ensure_ascii=False))


def _reasked(provider: Provider, messages: list[dict[str, str]], raw: str, errors: list[str],
             substance: bool) -> list[dict[str, str]]:
    """The conversation of the next attempt: the prompt, the failed reply and what to fix."""
    if substance and provider.small:
        # beside its own failed reply a small model mostly writes it again, or drifts into gibberish as it warms
        # up: it gets its prompt again, told what to fix
        return with_fixes(messages, errors)
    return [*messages, {"role": "assistant", "content": raw[:4000]}, reask_message(errors, substance=substance)]


# A question the health check asks, short and ordinary: the orchestrator's call is the first every debate makes.
HEALTH_QUESTION = "Should a small software team adopt a four-day working week?"


def health_check(provider: Provider, spec: Any, messages: list[dict[str, str]],
                 prepare: Callable[[Any], Any] | None = None) -> str:
    """What ``Provider.check()`` runs (the engine registers it with the orchestrator's spec and prompt for
    :data:`HEALTH_QUESTION`): that agent's call exactly as a debate makes it (its prompt, its wire schema
    constrained as the provider decodes it, its token limit and temperature, streamed), the reply checked as the
    debate checks it (parsed, the wire schema, the contract), with no re-ask. Raises the provider's error, or a
    SchemaViolationError naming the provider, model and endpoint; returns what answered and how fast."""
    schema = provider.constrain(spec.schema) if provider.supports_schema else None
    completion = provider.complete(ChatRequest(messages=messages, schema=schema, agent=spec.name, temperature=0.4,
                                               max_tokens=spec.max_tokens))
    parsed, errors = check(completion.text, spec.model, spec.schema, prepare)
    if parsed is None:
        raise SchemaViolationError(spec.name, 1, errors, completion.text, provider.describe())
    return (f"{provider.spec} answered a debate's first call (the {spec.name}, on its schema) in "
            f"{completion.seconds:.1f} s: {completion.completion_tokens} tokens, schema-valid.")
