"""The live six-phase debate (docs/design/live-protocol.md): protocol, conversation rules, turns, interventions,
transcript, job."""

from .debate import LiveDebate, Origin
from .protocol import PHASES, PLAN, LiveConfig, Step
from .transcript import INTERVENTION_TYPES, Intervention, Transcript, Turn
from .turn import Interrupted

__all__ = ["INTERVENTION_TYPES", "PHASES", "PLAN", "Interrupted", "Intervention", "LiveConfig", "LiveDebate",
           "Origin", "Step", "Transcript", "Turn"]
