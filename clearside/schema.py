"""The ClearSide schema v1.1.0 contract (docs/design/schema.md) as pydantic v2 models.

Rules carried by the models: every key the contract marks required is required,
no extra keys anywhere, enums are closed, string arrays hold at least one
element (except ``challenges.responses``), strings are never blank and
``meta.generated_at`` is an ISO-8601 datetime.

1.1.0 adds optional fields only (docs/design/schema.md#versioning; a 1.0 reader drops them on
import): ``quality``, the record of what the substance checks caught while the debate was
generated; ``personas``, the cases of a persona debate, with ``Argument.persona`` naming whose
argument it is and ``moderator.lens_divergence``; ``moderator.cruxes``, what depends on each
decision hinge; and ``remap``, the user's weights and assumption stances a re-mapped synthesis
was made under, with the original synthesis it is compared against; ``sources``, the user's own
sources, with ``Argument.citations`` (verbatim quotes verified against their passages) and
``Argument.support`` (cited or unsupported) when citations were on. A document that uses none
of them is stamped 1.0.0 (:func:`clearside.contract.version_for`). Optional keys may be omitted
but never set to ``null``: JSON Schema and pydantic must agree on that, so the
exported schema lists optional keys without a null alternative (:mod:`clearside.contract` exports it and
validates documents against it and these models).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

SCHEMA_VERSION = "1.1.0"
SCHEMA_ID = f"https://clearside.dev/schemas/clearside-{SCHEMA_VERSION}.schema.json"

Category = Literal["economic", "ethical", "technical", "social", "political", "environmental"]
EvidenceType = Literal["fact", "projection", "analogy", "value_judgment"]
Confidence = Literal["low", "medium", "high"]
Classification = Literal["factual", "uncertain", "values_dependent"]
Action = Literal["question_assumption", "stronger_counterargument", "evidence_that_changes_outcome",
                 "question_source"]  # 1.1: question_source, only on a citation
CATEGORY_VALUES: tuple[str, ...] = get_args(Category)
ACTIONS: tuple[Action, ...] = (  # the actions on any element (1.0)
    "question_assumption",
    "stronger_counterargument",
    "evidence_that_changes_outcome",
)
SOURCE_ACTION: Action = "question_source"  # 1.1: "is this source reliable for this claim?", on a citation
ALL_ACTIONS: tuple[Action, ...] = (*ACTIONS, SOURCE_ACTION)

# "[^ \t\n\r\f\v]" rather than "\S": Rust (pydantic) and Python (jsonschema) disagree on what \s covers.
Text = Annotated[str, StringConstraints(min_length=1, pattern=r"[^ \t\n\r\f\v]")]
TextList = Annotated[list[Text], Field(min_length=1)]


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _iso_datetime(value: str) -> str:
    """RFC 3339 date-time, the ISO-8601 profile JSON Schema's ``date-time`` format checks."""
    if not _RFC3339.fullmatch(value):
        raise ValueError(f"{value!r} is not an ISO-8601 datetime such as 2025-01-20T18:42:00Z "
                         "(date, T, time with seconds, and Z or an offset)")
    try:
        datetime.fromisoformat(value.upper())
    except ValueError:
        raise ValueError(f"{value!r} names a date or time that does not exist") from None
    return value


IsoDatetime = Annotated[str, Field(json_schema_extra={"format": "date-time"}), AfterValidator(_iso_datetime)]


class Strict(BaseModel):
    """Base for every schema object: unknown keys are rejected, null is never a value."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = [key for key, value in data.items() if value is None]
            if nulls:
                raise ValueError(f"{', '.join(nulls)} may be omitted but must not be null")
        return data

    def dump(self) -> dict[str, Any]:
        """Plain JSON-ready dict, omitting optional keys that are unset."""
        return self.model_dump(mode="json", exclude_none=True)


class ModelInfo(Strict):
    provider: Text
    model: Text


class Meta(Strict):
    schema_version: Annotated[str, StringConstraints(pattern=r"^1\.\d+\.\d+$")]
    generated_at: IsoDatetime
    model_info: ModelInfo
    confidence_level: Confidence
    notes: Text | None = None


class Context(Strict):
    geography: Text | None = None
    timeframe: Text | None = None
    domain: Text | None = None


class Proposition(Strict):
    raw_input: Text
    normalized_question: Text
    context: Context | None = None


SourceRef = Annotated[str, StringConstraints(pattern=r"^S[1-9][0-9]*$")]  # S1, S2 ...: a source in the debate
PassageId = Annotated[str, StringConstraints(pattern=r"^S[1-9][0-9]*\.[1-9][0-9]*$")]  # S1.3: its third passage
Support = Literal["cited", "unsupported"]
SourceKind = Literal["text", "markdown", "html", "pdf", "csv"]


class Citation(Strict):
    """1.1: a verbatim quote from one passage of one of the user's own sources, verified against that passage."""

    source: SourceRef
    passage: PassageId
    quote: Text


class CitedPassage(Strict):
    """1.1: a passage an argument cites, as the source has it, so every quote can be checked from the document."""

    id: PassageId
    text: Text
    page: Annotated[int, Field(ge=1)] | None = None  # a PDF's page the passage starts on


class SourceInfo(Strict):
    """1.1: one of the sources the user attached (stored with the debate by content hash)."""

    ref: SourceRef
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]  # of the file's bytes
    name: Text
    kind: SourceKind
    pages: Annotated[int, Field(ge=1)] | None = None  # a PDF's page count
    passages: list[CitedPassage] = Field(default_factory=list)  # the passages the arguments cite


class Argument(Strict):
    category: Category
    claim: Text
    explanation: Text
    evidence_type: EvidenceType
    confidence: Confidence
    persona: Text | None = None  # 1.1: the persona whose argument this is (persona debates)
    citations: Annotated[list[Citation], Field(min_length=1)] | None = None  # 1.1: verified quotes, citations on
    support: Support | None = None  # 1.1, citations on: cited (a verified quote) or unsupported (none)


class Side(Strict):
    """The ``pro`` or ``con`` section: one advocate's case."""

    executive_summary: TextList
    arguments: Annotated[list[Argument], Field(min_length=1)]
    assumptions: TextList
    uncertainties: TextList


class Disagreement(Strict):
    topic: Text
    description: Text
    root_cause: Text | None = None


class AssumptionConflict(Strict):
    pro_assumption: Text
    con_assumption: Text
    conflict_description: Text | None = None


Index = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0, le=1)]


class CruxLoad(Strict):
    pro: Share  # the share of FOR's arguments that depend on the hinge
    con: Share


class Crux(Strict):
    """1.1: what depends on one decision hinge, and what each answer to it would mean."""

    hinge: Index  # index into moderator.decision_hinges
    pro_arguments: list[Index] = Field(default_factory=list)  # indices into pro.arguments
    con_arguments: list[Index] = Field(default_factory=list)
    pro_assumptions: list[Index] = Field(default_factory=list)  # indices into pro.assumptions
    con_assumptions: list[Index] = Field(default_factory=list)
    load: CruxLoad
    if_yes: Text
    if_no: Text


class Moderator(Strict):
    areas_of_agreement: TextList
    core_disagreements: Annotated[list[Disagreement], Field(min_length=1)]
    assumption_conflicts: Annotated[list[AssumptionConflict], Field(min_length=1)]
    evidence_gaps: TextList
    decision_hinges: TextList
    lens_divergence: TextList | None = None  # 1.1, persona debates: where the lenses diverge
    cruxes: list[Crux] | None = None  # 1.1


class ResponseBody(Strict):
    analysis: TextList
    historical_context: TextList | None = None
    classification: Classification
    # 1.1, a challenge of a citation: verbatim quotes of the passage it discusses, verified against it
    citations: Annotated[list[Citation], Field(min_length=1)] | None = None


class ChallengeResponse(Strict):
    action: Action
    target: Text
    response: ResponseBody


class Challenges(Strict):
    available_actions: Annotated[list[Action], Field(min_length=1)]
    responses: list[ChallengeResponse] = Field(default_factory=list)


QualityAction = Literal["dropped", "replaced", "reasked", "flagged"]  # flagged: marked for the reader, kept
ContextField = Literal["geography", "timeframe", "domain"]


class QualityItem(Strict):
    """One thing a substance check caught in an agent's output, and what ClearSide did about it."""

    check: Text  # the check's name, e.g. duplicate_claim
    path: Text  # where in that agent's output, e.g. arguments/2/claim
    message: Text  # what was wrong, in the words sent to the model on a re-ask
    action: QualityAction  # dropped or replaced (repaired), or reasked (sent back to the model)
    text: Text | None = None  # the offending text, where there is one


class AgentQuality(Strict):
    attempts: Annotated[int, Field(ge=1)]  # model calls, re-asks included
    reasks: Annotated[int, Field(ge=0)]
    items: list[QualityItem] = Field(default_factory=list)


class Quality(Strict):
    """What the substance checks caught per agent, what was repaired or dropped, and how often each re-asked."""

    checks_version: Text
    strategy: Literal["whole", "focused", "single"]
    semantic: bool  # the embedding checks ran (False: lexical checks only)
    agents: dict[str, AgentQuality] = Field(default_factory=dict)
    inferred: list[ContextField] = Field(default_factory=list)  # context values the model inferred


Stance = Literal["for", "against", "mixed"]


class Persona(Strict):
    name: Text
    lens: Text  # the discipline's one-line lens
    builtin: bool


class PersonaCase(Strict):
    """1.1: one persona's case, written blind to the other personas."""

    persona: Persona
    stance: Stance
    arguments: Annotated[list[Argument], Field(min_length=1)]
    assumptions: TextList
    uncertainties: TextList


Weight = Annotated[int, Field(ge=0, le=3)]


class Weights(Strict):
    """How much the user cares about each argument category, 0 to 3 (unset: 1)."""

    economic: Weight | None = None
    ethical: Weight | None = None
    technical: Weight | None = None
    social: Weight | None = None
    political: Weight | None = None
    environmental: Weight | None = None


class AssumptionStance(Strict):
    side: Literal["pro", "con"]
    index: Index  # into that side's assumptions
    assumption: Text  # its text, as the user saw it
    stance: Literal["accept", "reject", "unsure"]


class Remap(Strict):
    """1.1: the conditions a re-mapped synthesis was made under, and the synthesis it replaced."""

    weights: Weights | None = None
    stances: list[AssumptionStance] = Field(default_factory=list)
    original: Moderator  # the synthesis before this re-map: the diff's other side
    remapped_at: IsoDatetime


class Document(Strict):
    """A complete ClearSide debate document."""

    model_config = ConfigDict(
        extra="forbid",
        title="ClearSide debate document",
        json_schema_extra={"$id": SCHEMA_ID},
    )

    meta: Meta
    proposition: Proposition
    pro: Side
    con: Side
    moderator: Moderator
    challenges: Challenges
    quality: Quality | None = None  # 1.1
    personas: Annotated[list[PersonaCase], Field(min_length=2, max_length=4)] | None = None  # 1.1
    remap: Remap | None = None  # 1.1
    sources: Annotated[list[SourceInfo], Field(min_length=1)] | None = None  # 1.1: the user's sources, if any
