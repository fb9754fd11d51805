"""The live six-phase debate (spec 004): protocol, guardrails, interventions, transcript and worker."""

from .debate import LiveDebate
from .protocol import PHASES, PLAN, LiveConfig, Step
from .transcript import INTERVENTION_TYPES, Intervention, Transcript, Turn
from .turn import Interrupted

__all__ = ["INTERVENTION_TYPES", "PHASES", "PLAN", "Interrupted", "Intervention", "LiveConfig", "LiveDebate",
           "Step", "Transcript", "Turn"]
