"""What bench/latency_server.py answers: schema-valid replies for ClearSide's agents, chosen from the request.

The agent is read from the JSON Schema the request constrains decoding to (its property names) and, for
the advocates, from their role in the prompt ("Your role: Con Advocate" / "case AGAINST" the proposition).
The debate agents answer with the flagship benchmark's own debate (``clearside.references.flagship``), cut to the
agents' wire limits as tests/helpers.py ``flagship_replies`` does, so a debate of the flagship proposition (the
``flagship`` regression suite) passes the substance checks; any other question gets the same on-schema text,
which those checks may reject as off topic (run such debates with ``substance=False``). Requests from other
agents (live turns, perspectives) get a reply built from their schema alone; a challenge gets an analysis of the
flagship's first decision hinge (a challenge of another element may be rejected as off target).
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from clearside.quality.references import flagship

SIDE_KEYS = {"executive_summary", "arguments", "assumptions", "uncertainties", "categories"}
MODERATOR_KEYS = {"areas_of_agreement", "core_disagreements", "assumption_conflicts", "evidence_gaps",
                  "decision_hinges"}
CHALLENGE_KEYS = {"analysis", "historical_context", "classification"}


def _short(text: str, limit: int) -> str:
    if text.endswith("?") and len(text) <= limit:
        return text
    text = text.split(". ")[0].rstrip(".") + "."
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "."


@cache
def flagship_replies() -> dict[str, dict[str, Any]]:
    """One reply per debate agent from the flagship reference's hand-structured document."""
    doc = flagship().document or {}

    def side(name: str) -> dict[str, Any]:
        s = doc[name]
        arguments = [{**a, "explanation": _short(a["explanation"], 175)} for a in s["arguments"][:4]]
        # the assumptions the moderator's conflicts pair come first, so picking P1/C1, P2/C2 finds them
        paired = [c[f"{name}_assumption"] for c in doc["moderator"]["assumption_conflicts"][:2]]
        assumptions = list(dict.fromkeys([*paired, *s["assumptions"]]))[:3]
        return {"executive_summary": [_short(t, 105) for t in s["executive_summary"][:3]], "arguments": arguments,
                "categories": [a["category"] for a in arguments[:3]],
                "assumptions": [_short(t, 125) for t in assumptions],
                "uncertainties": [_short(t, 125) for t in s["uncertainties"][:3]]}

    def cut(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _short(v, 75) if k == "topic" else cut(v) for k, v in value.items()}
        return _short(value, 125) if isinstance(value, str) else [cut(v) for v in value]

    m = cut(doc["moderator"])
    return {
        "orchestrator": {"normalized_question": doc["proposition"]["normalized_question"],
                         "context": {"geography": "United States", "timeframe": "Next five years",
                                     "domain": "AI infrastructure policy"}},
        "pro": side("pro"),
        "con": side("con"),
        "moderator": {"areas_of_agreement": m["areas_of_agreement"][:3],
                      "core_disagreements": m["core_disagreements"][:3],
                      "assumption_conflicts": m["assumption_conflicts"][:2],
                      "evidence_gaps": m["evidence_gaps"][:3], "decision_hinges": m["decision_hinges"][:4]},
        # a challenge of the first decision hinge ("Can AI governance demonstrably keep pace without pauses?")
        "challenge": {"analysis": ["AI governance keeps pace only where regulators can audit new AI capacity as "
                                   "fast as it is built.",
                                   "Whether a pause is worth its cost to keep governance in step is a matter of "
                                   "priorities."],
                      "historical_context": ["Earlier moratoria on new technologies bought regulators time at a "
                                             "cost to investment."],
                      "classification": "uncertain"},
    }


def agent_of(schema: dict[str, Any] | None, messages: list[dict[str, Any]]) -> str:
    """orchestrator, pro, con, moderator, challenge, or "" for any other agent."""
    keys = set((schema or {}).get("properties", {}))
    # the advocate's role follows the shared topic block in its first user message
    told = " ".join(str(m.get("content", "")) for m in messages if m.get("role") in ("system", "user"))
    if keys and keys <= {"normalized_question", "context"}:
        return "orchestrator"
    if keys and keys <= SIDE_KEYS:
        return "con" if "Your role: Con Advocate" in told or "case AGAINST" in told else "pro"
    if keys and keys <= MODERATOR_KEYS:
        return "moderator"
    if keys and keys <= CHALLENGE_KEYS:
        return "challenge"
    return ""


def reply_for(schema: dict[str, Any] | None, messages: list[dict[str, Any]]) -> Any:
    """The reply a request gets: its agent's flagship reply fitted to the schema it sent."""
    agent = agent_of(schema, messages)
    if not schema:
        return {"answer": "OK"}
    if not agent:
        return fill(schema)
    reply = copy.deepcopy(flagship_replies()[agent])
    said = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    if agent in ("pro", "con") and "arguments" in schema["properties"] and len(schema["properties"]) == 1:
        # one argument per call (the focused strategy): the first one this conversation has not made yet
        reply["arguments"] = [a for a in reply["arguments"] if a["claim"] not in said] or reply["arguments"]
    return conform(reply, schema)


def conform(value: Any, schema: dict[str, Any], index: int = 0) -> Any:
    """``value`` fitted to ``schema``: only the properties it asks for, arrays within their bounds, an enum
    value it allows (the ``index``-th where the value is not one: the moderator picks assumptions by id)."""
    if "enum" in schema:
        return value if value in schema["enum"] else schema["enum"][index % len(schema["enum"])]
    kind = schema.get("type")
    if kind == "object":
        given = value if isinstance(value, dict) else {}
        return {key: conform(given[key], sub, index) if key in given else fill(sub, key)
                for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        items = list(value) if isinstance(value, list) else []
        low, high = schema.get("minItems", 1), schema.get("maxItems", max(len(items), 1))
        fitted = [conform(item, schema.get("items", {}), i) for i, item in enumerate(items[:high])]
        return fitted + [fill(schema.get("items", {}), f"item {i + 1}", i) for i in range(len(fitted), low)]
    return value if isinstance(value, str) else fill(schema)


def fill(schema: dict[str, Any], key: str = "", index: int = 0) -> Any:
    """A value for ``schema`` made from the schema alone (strings name their field, within maxLength)."""
    if "enum" in schema:
        return schema["enum"][index % len(schema["enum"])]
    kind = schema.get("type")
    if kind == "object":
        return {k: fill(v, k) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [fill(schema.get("items", {}), f"{key} {i + 1}", i) for i in range(schema.get("minItems", 1))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    text = f"The {key.replace('_', ' ') or 'answer'} in this benchmark reply is about service boundaries."
    return text[: schema.get("maxLength", 200)]
