"""Valid replies for the perspectives agents (scripted provider), each tagged so tests can trace what flowed where."""

from __future__ import annotations

from typing import Any

QUESTION = "My partner reads my messages without asking. Should I say something?"
ANSWERS = "It happened three times this month. We have been together two years. I want trust, not a fight."


def clarifier_reply() -> dict[str, Any]:
    return {"questions": ["How often has this happened so far?", "How long have you been together?",
                          "What outcome do you want from talking about it?"]}


def expansion_reply(tag: str) -> dict[str, Any]:
    return {
        "emotional_reality": f"{tag}: feeling watched can hurt and make trust feel fragile.",
        "interpretations": [f"{tag} reading one: anxiety about the relationship",
                            f"{tag} reading two: a habit that seems harmless to them",
                            f"{tag} reading three: a sign of deeper mistrust"],
        "actions": [f"{tag} gentle: mention it calmly", f"{tag} middle: ask what they were looking for",
                    f"{tag} firm: set a clear rule about privacy"],
        "script_brief": f"{tag}: I noticed my phone was read and I want to talk about it.",
        "script_extended": f"{tag}: I care about us, and privacy matters to me; can we talk about what is going on?",
        "boundary": f"{tag}: please ask before reading my messages.",
        "flags": [{"pattern": "control", "where": "situation", "evidence": f"{tag}: reading messages without asking"}],
    }


def compression_reply(tag: str) -> dict[str, Any]:
    return {
        "best_interpretation": f"{tag}: a privacy boundary was crossed several times.",
        "known_facts": [f"{tag}: messages were read three times this month"],
        "assumptions": [f"{tag}: that the partner means harm"],
        "checklist": {"boundary": f"{tag}: yes, privacy was crossed", "insecurity": f"{tag}: possibly on their side",
                      "values_mismatch": f"{tag}: unclear so far"},
        "boundary": f"{tag}: my phone is not read without asking, starting today.",
        "script_brief": f"{tag}: please do not read my messages without asking.",
        "script_extended": f"{tag}: when my messages are read without asking I feel watched; I need you to ask.",
        "next_steps": [{"if": f"{tag}: they agree", "then": "check in after two weeks"},
                       {"if": f"{tag}: they refuse", "then": "talk about what trust means to each of you"}],
        "flags": [],
    }


def synthesis_reply() -> dict[str, Any]:
    return {
        "debate_evolution": "A widened the readings; B narrowed them to a privacy boundary and testable steps.",
        "conclusions": ["Privacy was crossed repeatedly", "The reason is not yet known"],
        "next_steps": ["Raise it calmly and ask what was behind it", "Agree on asking first"],
        "open_questions": ["What does the partner say when asked?"],
        "framing": "The feelings make sense; what happens next is yours to choose.",
    }


def summary_reply(tag: str = "summary") -> dict[str, Any]:
    return {"summary": f"{tag}: earlier rounds weighed anxiety against a crossed privacy boundary."}


def script(rounds: int, *, summaries: int = 0) -> dict[str, list[Any]]:
    """Queues for the scripted provider: a whole session of ``rounds`` rounds."""
    return {
        "perspectives-clarifier": [clarifier_reply()],
        "perspectives-A": [expansion_reply(f"A{n}") for n in range(1, rounds + 1)],
        "perspectives-B": [compression_reply(f"B{n}") for n in range(1, rounds + 1)],
        "perspectives-synthesis": [synthesis_reply()],
        "perspectives-summarizer": [summary_reply(f"S{i}") for i in range(1, summaries + 1)],
    }
