"""Domain schemas: vocabularies with synonyms, record fields, aspects and intent fields.

Long: one pydantic model family whose validators check the schema's consistency across
fields, aspects and vocabularies together, and the loader of the bundled and user schemas.

A domain schema is the foundation of the pipeline: it says which fields become which named
dense vector (an *aspect*), which fields the BM25 keyword index reads, which fields may be
filtered on and with which operators (the allowlist every filter compiler enforces), and which
controlled vocabularies the intent extractor may emit. Schemas ship as YAML files in
``agentic_search/domains`` (``tools`` and ``documents``); a user may load their own with
:func:`load_schema` given a path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from agentic_search.logic.tuning import Tuning
from agentic_search.wire.query import Operator

FieldType = Literal["string", "list", "number", "integer", "boolean"]
#: The numeric field types: ``number`` (a float) and ``integer`` (a whole number, kept as one).
NUMERIC_TYPES = frozenset({"number", "integer"})

#: Operators that make sense per field type; a schema that allows others is rejected at load.
_OPERATORS_BY_TYPE: dict[str, set[str]] = {
    "string": {"eq", "ne", "in", "nin", "contains"},
    "list": {"in", "nin"},
    "number": {"eq", "ne", "lt", "lte", "gt", "gte"},
    "integer": {"eq", "ne", "lt", "lte", "gt", "gte"},
    "boolean": {"eq", "ne"},
}


class SchemaError(ValueError):
    """Raised when a domain schema file is missing or inconsistent."""


# Every model here is built on first use (``defer_build``), not at import: a process
# validates one DomainSchema, whose validator covers the nested models, and seldom any of
# them alone (a cache hit imports this module and loads one schema).
class FieldDef(BaseModel):
    """One record field: its type, constraints and the filter operators allowed on it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: FieldType
    required: bool = False
    nullable: bool = False
    vocabulary: str | None = None
    filter: list[Operator] = Field(default_factory=list)
    relax_rank: int | None = Field(
        default=None, description="Softness for the relaxation ladder: lower relaxes first."
    )
    pattern: str | None = Field(
        default=None, description="a string's regular expression (matched in full)"
    )
    minimum: float | None = Field(default=None, description="a number's least allowed value")
    maximum: float | None = Field(default=None, description="a number's greatest allowed value")

    @property
    def numeric(self) -> bool:
        """Whether the field holds numbers (``number`` or ``integer``)."""
        return self.type in NUMERIC_TYPES


class Aspect(BaseModel):
    """A named dense vector built from chosen record fields."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    fields: list[str] = Field(min_length=1)
    description: str = ""
    default_top_k: int = Field(default=20, ge=1, le=200)
    weight: float = Field(
        default=1.0,
        gt=0,
        le=10,
        description="the weight of this aspect's dense lists in the fusion (weighted RRF)",
    )
    whole_record: bool = Field(
        default=False,
        description="the record's every text field in one vector: searched by every plan "
        "(the simplest dense baseline a user would try, kept in each plan so that per-aspect "
        "fragments never lose what it finds); at most one aspect of a schema",
    )


class IntentFieldDef(BaseModel):
    """A field of the IntentState that an extractor (rules or LLM) fills."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    type: Literal["enum", "string", "list"]
    description: str = ""
    vocabulary: str | None = None
    values: list[str] | None = None


class SortSpec(BaseModel):
    """A declared sort field ranking structured hits after their match count: a preference
    such as popularity or rating (``{field: downloads, order: desc}``)."""

    model_config = ConfigDict(defer_build=True)

    field: str
    order: Literal["asc", "desc"] = "asc"


#: The roles an aspect may play for the planner: what a record is and is called (identity),
#: what it does (capability), what it is used for and by whom (usecase), where and how it
#: runs (platform). A vocabulary routes to one of them (or to none: a preference only).
AspectRole = Literal["identity", "capability", "usecase", "platform"]
ASPECT_ROLES: tuple[str, ...] = ("identity", "capability", "usecase", "platform")


class AspectRoles(BaseModel):
    """Which aspect answers which question of a query (:data:`AspectRole`); ``identity``
    defaults to the first aspect, the others to none (a role with no aspect is not searched
    for)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    identity: str | None = None
    capability: str | None = None
    usecase: str | None = None
    platform: str | None = None


class Roles(BaseModel):
    """What the planner and the intent reader take from the schema instead of knowing names.

    ``aspects``: the aspect of each role (:class:`AspectRoles`). ``vocabularies``: for each
    vocabulary whose matched values the planner uses, the aspect role those values route to
    (None: no aspect, a structured preference only), in the order the structured source
    lists them as preferences; left out (None), every vocabulary is a preference with no
    route, in the schema's order, except those the constraint phrases set.
    ``reference_profile``: the vocabularies whose values a reference record ("alternative to
    X") is searched by; left out, those routed to ``capability``. ``always``: the aspects
    searched with the query text in every plan beside identity; left out, every aspect
    that plays no role when ``aspects`` declares none (a minimal YAML searches each aspect
    it embeds), else none (an aspect given no role is routed by whatever declares it)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    aspects: AspectRoles = Field(default_factory=AspectRoles)
    vocabularies: dict[str, AspectRole | None] | None = None
    reference_profile: list[str] | None = None
    always: list[str] | None = None


#: The fields an index-time enrichment provides (payload keys; see logic/enrichment.py), which
#: a domain's aspects and keyword fields may read when it declares ``enrichment``.
ENRICHED_FIELD_NAMES = ("_needs", "_category", "_context")


class EnrichmentSpec(BaseModel):
    """Index-time LLM enrichment of a domain (``agentic_search.logic.enrichment``).

    ``kind``: ``catalog`` (needs and a category for each record, read from ``fields``) or
    ``document`` (a situating context for each chunk of a chunked document).
    ``keyword_weight``: how many times the enrichment's words count in the BM25 text (an
    integer field weight, exactly BM25F's for whole weights: Robertson, Zaragoza and Taylor,
    "Simple BM25 extension to multiple weighted fields", CIKM 2004); 0 leaves them out.
    ``route_aspect``: the aspect the planner adds for task-phrased intents (None: none).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["catalog", "document"]
    fields: list[str] = Field(default_factory=list)
    keyword_weight: int = Field(default=1, ge=0, le=5)
    route_aspect: str | None = None


class ChunkSpec(BaseModel):
    """Chunking of long texts at ingest (see ``agentic_search.logic.chunking``), in words."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    max_words: int = Field(ge=2, le=10000)
    overlap_words: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _overlap_smaller(self) -> ChunkSpec:
        if self.overlap_words >= self.max_words:
            raise ValueError("overlap_words must be smaller than max_words")
        return self


class RelationSpec(BaseModel):
    """Declared relations between records, built at ingest beside the mention edges.

    ``similar_aspect``: each record's ``similar_k`` nearest neighbours on that aspect's stored
    vector (cosine at least ``similar_min``) become ``similar`` edges. ``integrates_field``:
    records named in that field's "integrates with ...", "plugin for ...", "works with ..."
    phrases become ``integrates`` edges (the rest of that field's mentions stay ``mention``).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    similar_aspect: str | None = None
    similar_k: int = Field(default=5, ge=1, le=50)
    similar_min: float = Field(default=0.6, ge=-1.0, le=1.0)
    integrates_field: str | None = None


class EntitySpec(BaseModel):
    """Records as named entities: which fields name a record, which fields mention others.

    ``names``: fields whose value is the record's name (the title by default); ``aliases``: a
    list field of other names ("VS Code" for "Visual Studio Code"); ``link_fields``: fields
    scanned at ingest for mentions of other records' names (the mention edges of the entity
    graph); ``relations``: declared edges (see :class:`RelationSpec`).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    names: list[str] = Field(default_factory=list)
    aliases: str | None = None
    link_fields: list[str] = Field(default_factory=list)
    relations: RelationSpec = Field(default_factory=RelationSpec)


class TemporalSpec(BaseModel):
    """The record field that dates a record, for "since 2023", "released in 2024", "in the last
    6 months", "before 2020": a number field holding a (possibly fractional) year."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    field: str
    label: str = Field(default="released", description="how answers name the date")


class ComparisonSpec(BaseModel):
    """What a comparison's answer puts side by side: ``fields`` shown per record, and
    ``sets`` (list fields) split into the values every compared record has and those only
    some have."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    fields: list[str] = Field(default_factory=list)
    sets: list[str] = Field(default_factory=list)


class QualitySpec(BaseModel):
    """Abstention per candidate (see :mod:`agentic_search.logic.quality`): a candidate is
    supported by its own evidence, among which its cosine to the query at least
    ``candidate_relevance``; one with no evidence and a cosine under ``candidate_floor`` is
    withheld. The answer is "no good match" when none of the first ten is supported and the
    evidence's coverage confidence is below ``min_coverage``; it is ``good`` when the best
    cosine reaches ``min_relevance`` and the coverage ``min_coverage``. Calibrated per domain
    (the bundled values say on what data in the schema files) and, for another embedder's
    cosine scale, per model (:attr:`DomainSchema.calibrations`); the defaults abstain never.

    How the query reads against the catalog moves the cosine a candidate needs
    (:class:`~agentic_search.logic.quality.QueryReading`): ``unread_relevance`` when half
    of the query's content words are in no record, in letters outside ASCII (another
    language: the embedder reads it poorly and keywords cannot help),
    ``missing_word_relevance`` when the catalog reads the query but one of its content words
    is in no record (a need the catalog may not cover: "backup", "Spotify"), and then the
    coverage of the other words does not make an answer. None: ``candidate_relevance`` (and
    the index is not asked which words it holds)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    min_relevance: float = Field(default=0.0, ge=-1.0, le=1.0)
    min_coverage: float = Field(default=0.0, ge=0.0, le=1.0)
    candidate_relevance: float = Field(default=-1.0, ge=-1.0, le=1.0)
    candidate_floor: float = Field(default=-1.0, ge=-1.0, le=1.0)
    unread_relevance: float | None = Field(default=None, ge=-1.0, le=1.0)
    missing_word_relevance: float | None = Field(default=None, ge=-1.0, le=1.0)

    @property
    def reads_words(self) -> bool:
        """Whether the thresholds depend on which query words the catalog holds."""
        return self.unread_relevance is not None or self.missing_word_relevance is not None


class ConstraintFields(BaseModel):
    """Which record fields (and which of their vocabulary values) the rule-based extractor's
    constraint phrases set: ``price`` (a number field: "under $20", "cheaper than X"),
    ``pricing`` ("free" -> ``free_values``, "not paid" -> not ``paid_values``),
    ``open_source`` (a boolean field: "open source", "not open source") and ``deployment``
    ("works locally" -> ``local_values``, "self-hosted" -> ``self_hosted_values``, "not
    cloud" -> both). A role left unset is not read (a schema without prices has no "under
    $20")."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    price: str | None = None
    pricing: str | None = None
    free_values: list[str] = Field(default_factory=list)
    paid_values: list[str] = Field(default_factory=list)
    open_source: str | None = None
    deployment: str | None = None
    local_values: list[str] = Field(default_factory=list)
    self_hosted_values: list[str] = Field(default_factory=list)
    hard_values: dict[str, list[str]] = Field(
        default_factory=dict,
        description="vocabulary -> the values that are hard filters when a query names "
        "them (an operating system: 'for Linux'), not soft preferences",
    )


class CapabilitySpec(BaseModel):
    """The vocabularies a need is matched against by meaning (see
    :mod:`agentic_search.logic.capabilities`): entries whose cosine to the query is at least
    ``min_score``, at most ``max_matches`` of them, when the query's words matched no value of
    these vocabularies. A cosine threshold belongs to one model's cosine scale:
    ``calibrated_for`` names the embedder models (their identity's ``model``) it was chosen
    with; under another embedder the step is off (empty: any embedder) unless the schema's
    ``calibrations`` give that model a ``capability_min_score`` of its own."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    vocabularies: list[str] = Field(min_length=1)
    min_score: float = Field(default=0.5, ge=-1.0, le=1.0)
    max_matches: int = Field(default=1, ge=0, le=10)
    calibrated_for: list[str] = Field(default_factory=list)


class EmbedderCalibration(BaseModel):
    """The cosine thresholds of a domain chosen for one embedder model (cosine scales differ
    between models: multilingual-e5-small puts an unrelated pair near 0.75, MiniLM near 0.1).
    ``quality`` replaces the schema's ``quality`` and ``capability_min_score`` its
    ``capabilities.min_score`` and ``later_dense_weight`` the schema's
    ``later_dense_weight`` when the search's embedder is that model; a value left unset
    keeps the schema's own (for ``capability_min_score``: the step stays off unless the model
    is in ``capabilities.calibrated_for``). Keyed, in :attr:`DomainSchema.calibrations`, by the
    identity's ``model`` (what the collection records: ``multilingual-e5-small-q4``)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    quality: QualitySpec | None = None
    capability_min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    later_dense_weight: float | None = Field(default=None, ge=0.0, le=1.0)


#: What each constraint role needs of its field: type(s) and the operators the extractor emits.
_ROLE_NEEDS: dict[str, tuple[set[str], set[str]]] = {
    "price": (set(NUMERIC_TYPES), {"lt", "lte"}),
    "pricing": ({"string", "list"}, {"in", "nin"}),
    "open_source": ({"boolean"}, {"eq"}),
    "deployment": ({"string", "list"}, {"in", "nin"}),
}
_ROLE_VALUES = {
    "pricing": ("free_values", "paid_values"),
    "deployment": ("local_values", "self_hosted_values"),
}


class RestrictedClass(BaseModel):
    """A class of records readable only by callers holding ``claim`` (one of their
    principals): those whose ``field`` holds one of ``values`` (``sensitivity: [restricted]``).
    A query that asks for the class without the claim is refused with a reason."""

    model_config = ConfigDict(extra="forbid")

    field: str
    values: list[str] = Field(min_length=1)
    claim: str = Field(min_length=1, max_length=200)


class AccessSpec(BaseModel):
    """Per-record access control (docs/guides/access-control.md): ``field`` is a list field of
    principals (user ids, groups, tenants) that may read the record; ``default`` says what a
    record without it (or with an empty list) is: ``deny`` (nobody but ``admin``) or
    ``public`` (every caller). ``admin`` is the principal that reads every record (none when
    unset); ``restricted`` lists the classes that need a named claim besides."""

    model_config = ConfigDict(extra="forbid")

    field: str
    default: Literal["deny", "public"] = "deny"
    admin: str | None = Field(default=None, min_length=1, max_length=200)
    restricted: list[RestrictedClass] = Field(default_factory=list)


class DomainSchema(BaseModel):
    """A domain: vocabularies, record fields, aspects, keyword fields and intent fields.

    ``vocabularies`` maps a vocabulary name to ``{canonical value: [synonyms]}``; canonical
    values are what records carry and what filters compare against.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    _source: Path | None = PrivateAttr(default=None)

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    version: str = Field(description="the schema's own version label: a string or a YAML number")
    id_field: str = "id"
    title_field: str
    text_field: str
    vocabularies: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    fields: dict[str, FieldDef]
    vocabulary_fields: dict[str, str] = Field(default_factory=dict)
    aspects: list[Aspect] = Field(min_length=1)
    keyword_fields: list[str] = Field(min_length=1)
    structured_sort: list[SortSpec] = Field(
        default_factory=list,
        description="the preference fields ranking a structured source's hits after their "
        "match count, most significant first (one spec or a list; the id breaks ties)",
    )
    roles: Roles = Field(default_factory=Roles)
    chunking: ChunkSpec | None = None
    enrichment: EnrichmentSpec | None = None
    candidate_metadata: dict[str, str] = Field(default_factory=dict)
    intent_fields: list[IntentFieldDef] = Field(default_factory=list)
    entities: EntitySpec | None = None
    temporal: TemporalSpec | None = None
    comparison: ComparisonSpec = Field(default_factory=ComparisonSpec)
    quality: QualitySpec = Field(default_factory=QualitySpec)
    constraint_fields: ConstraintFields = Field(default_factory=ConstraintFields)
    capabilities: CapabilitySpec | None = None
    calibrations: dict[str, EmbedderCalibration] = Field(default_factory=dict)
    access: AccessSpec | None = Field(
        default=None,
        description="per-record access control: the principals field, the default of a record "
        "without it, the administrator principal and the restricted classes",
    )
    later_dense_weight: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="ExecutorCaps.later_dense_weight for this domain: the RRF weight of round "
        "1's dense query run again in a later round that has none of its own (0: such a "
        "round is BM25-only). Chosen per domain on its tuning split (benchmarks/README.md)",
    )
    tuning: Tuning = Field(
        default_factory=Tuning,
        description="the numbers the search's rules are tuned with (coverage, intent, "
        "linking, graph, depth, executor): only the keys the domain changes, the rest keep "
        "their defaults (`agentic-search config --domain NAME` prints them all)",
    )

    @field_validator("structured_sort", mode="before")
    @classmethod
    def _sort_list(cls, v: Any) -> Any:
        # one spec (`{field: name, order: asc}`) or a list of them
        return [v] if isinstance(v, dict) else v

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: Any) -> Any:
        # `version: 1` and `version: 1.2` are YAML numbers: the label is their text
        if isinstance(v, int | float) and not isinstance(v, bool):
            return str(v)
        return v

    def quality_for(self, model: str | None) -> QualitySpec:
        """The abstention thresholds for the embedder ``model`` (its identity's name): its
        entry of ``calibrations`` when that sets ``quality``, else the schema's ``quality``."""
        cal = self.calibrations.get(model) if model else None
        return cal.quality if cal is not None and cal.quality is not None else self.quality

    def later_dense_weight_for(self, model: str | None) -> float:
        """The later rounds' dense weight for the embedder ``model``: its entry of
        ``calibrations`` when that sets one, else the schema's ``later_dense_weight``."""
        cal = self.calibrations.get(model) if model else None
        if cal is not None and cal.later_dense_weight is not None:
            return cal.later_dense_weight
        return self.later_dense_weight

    def capability_min_score_for(self, model: str | None) -> float | None:
        """The capability step's cosine threshold for the embedder ``model``: its entry of
        ``calibrations`` when that sets one, else ``capabilities.min_score`` when
        ``calibrated_for`` is empty or names the model (or no model is known); None (the step
        is off) otherwise, and when the schema declares no ``capabilities``."""
        spec = self.capabilities
        if spec is None:
            return None
        cal = self.calibrations.get(model) if model else None
        if cal is not None and cal.capability_min_score is not None:
            return cal.capability_min_score
        if not spec.calibrated_for or model is None or model in spec.calibrated_for:
            return spec.min_score
        return None

    def _enrichment_problems(self, known: set[str]) -> list[str]:
        """Problems of ``enrichment``: prompt fields unknown, a route to an unknown aspect, a
        document enrichment without chunking; and enriched fields read without one."""
        spec = self.enrichment
        if spec is None:
            read = [f for a in self.aspects for f in a.fields] + list(self.keyword_fields)
            return [
                f"field {f!r} is written by an enrichment, which the domain does not declare"
                for f in dict.fromkeys(read)
                if f in ENRICHED_FIELD_NAMES
            ]
        problems = [f"enrichment reads unknown field {f!r}" for f in spec.fields if f not in known]
        if spec.kind == "catalog" and not spec.fields:
            problems.append("a catalog enrichment names the fields its prompt reads")
        if spec.kind == "document" and self.chunking is None:
            problems.append("a document enrichment situates chunks: declare chunking")
        if spec.route_aspect is not None and spec.route_aspect not in self.aspect_names:
            problems.append(f"enrichment routes to unknown aspect {spec.route_aspect!r}")
        return problems

    @property
    def enriched_aspects(self) -> list[str]:
        """The aspects that read only what an enrichment writes (a record without one has no
        text there, so no vector; empty without ``enrichment``)."""
        return [a.name for a in self.aspects if all(f in ENRICHED_FIELD_NAMES for f in a.fields)]

    @model_validator(mode="after")
    def _consistent(self) -> DomainSchema:
        problems: list[str] = []
        known = set(self.fields)
        problems += self._enrichment_problems(known)
        if self.enrichment is not None:
            known |= set(ENRICHED_FIELD_NAMES)
        for required in (self.id_field, self.title_field, self.text_field):
            if required not in known:
                problems.append(f"field {required!r} is named but not defined under fields")
        for fname, fdef in self.fields.items():
            if fdef.vocabulary and fdef.vocabulary not in self.vocabularies:
                problems.append(f"field {fname!r} uses unknown vocabulary {fdef.vocabulary!r}")
            bad_ops = set(fdef.filter) - _OPERATORS_BY_TYPE[fdef.type]
            if bad_ops:
                problems.append(f"field {fname!r} ({fdef.type}) allows {sorted(bad_ops)}")
            if fdef.pattern is not None and fdef.type != "string":
                problems.append(f"field {fname!r} ({fdef.type}) has a pattern: strings only")
            if (fdef.minimum, fdef.maximum) != (None, None) and not fdef.numeric:
                problems.append(f"field {fname!r} ({fdef.type}) has bounds: numbers only")
            if fdef.pattern is not None:
                try:
                    re.compile(fdef.pattern)
                except re.error as exc:
                    problems.append(f"field {fname!r} has an invalid pattern: {exc}")
        for vocab, fname in self.vocabulary_fields.items():
            if vocab not in self.vocabularies:
                problems.append(f"vocabulary_fields names unknown vocabulary {vocab!r}")
            if fname not in known:
                problems.append(f"vocabulary_fields maps {vocab!r} to unknown field {fname!r}")
        if (whole := [a.name for a in self.aspects if a.whole_record])[1:]:
            problems.append(f"aspects {whole} are each whole_record: at most one may be")
        seen: set[str] = set()
        for aspect in self.aspects:
            if aspect.name in seen:
                problems.append(f"aspect {aspect.name!r} is defined twice")
            seen.add(aspect.name)
            problems += [
                f"aspect {aspect.name!r} reads unknown field {f!r}"
                for f in aspect.fields
                if f not in known
            ]
        problems += [
            f"keyword field {f!r} is unknown" for f in self.keyword_fields if f not in known
        ]
        problems += [
            f"candidate_metadata maps {k!r} to unknown field {v!r}"
            for k, v in self.candidate_metadata.items()
            if v not in known
        ]
        problems += [
            f"structured_sort field {spec.field!r} is unknown"
            for spec in self.structured_sort
            if spec.field not in known
        ]
        problems += self._role_problems()
        problems += self._entity_problems(known)
        problems += self._intent_problems()
        problems += self._access_problems()
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _entity_problems(self, known: set[str]) -> list[str]:
        problems: list[str] = []
        spec = self.entities
        if spec is not None:
            for f in [*spec.names, *spec.link_fields, *([spec.aliases] if spec.aliases else [])]:
                if f not in known:
                    problems.append(f"entities names unknown field {f!r}")
            if (
                spec.aliases
                and spec.aliases in self.fields
                and self.fields[spec.aliases].type != "list"
            ):
                problems.append(f"entities.aliases field {spec.aliases!r} must be a list")
            rel = spec.relations
            if rel.similar_aspect and rel.similar_aspect not in {a.name for a in self.aspects}:
                problems.append(f"relations.similar_aspect {rel.similar_aspect!r} is no aspect")
            if rel.integrates_field and rel.integrates_field not in known:
                problems.append(f"relations.integrates_field {rel.integrates_field!r} is unknown")
        for f in [*self.comparison.fields, *self.comparison.sets]:
            if f not in known:
                problems.append(f"comparison names unknown field {f!r}")
        for f in self.comparison.sets:
            if f in self.fields and self.fields[f].type != "list":
                problems.append(f"comparison set {f!r} must be a list field")
        if self.temporal is not None:
            fdef = self.fields.get(self.temporal.field)
            if fdef is None or not fdef.numeric:
                problems.append(f"temporal field {self.temporal.field!r} must be a number field")
            elif not {"gte", "lt"} <= set(fdef.filter):
                problems.append(f"temporal field {self.temporal.field!r} must allow gte and lt")
        return problems

    def _access_problems(self) -> list[str]:
        """Problems of ``access``: its field must be a declared list field that allows no
        filter (a caller filtering on it could learn who else reads a record); each restricted
        class names a declared string or list field, values in its vocabulary when it has one."""
        spec = self.access
        if spec is None:
            return []
        problems: list[str] = []
        fdef = self.fields.get(spec.field)
        if fdef is None:
            problems.append(f"access.field {spec.field!r} is not defined under fields")
        else:
            if fdef.type != "list":
                problems.append(f"access.field {spec.field!r} must be a list field")
            if fdef.filter:
                problems.append(f"access.field {spec.field!r} must allow no filter operator")
        for cls in spec.restricted:
            cdef = self.fields.get(cls.field)
            if cdef is None:
                problems.append(f"access.restricted names unknown field {cls.field!r}")
                continue
            if cdef.type not in ("string", "list"):
                problems.append(f"access.restricted field {cls.field!r} must be string or list")
            allowed = self.vocabularies.get(cdef.vocabulary or "")
            if allowed is not None:
                problems += [
                    f"access.restricted value {v!r} is not in the vocabulary of {cls.field!r}"
                    for v in cls.values
                    if v not in allowed
                ]
        return problems

    def _role_problems(self) -> list[str]:
        """Problems of ``roles``: unknown aspects or vocabularies, a routed or profiled
        vocabulary with no field, or one whose field does not allow ``in``."""
        problems: list[str] = []
        aspects = {a.name for a in self.aspects}
        for role in ASPECT_ROLES:
            name = getattr(self.roles.aspects, role)
            if name is not None and name not in aspects:
                problems.append(f"roles.aspects.{role} names unknown aspect {name!r}")
        problems += [
            f"roles.always names unknown aspect {name!r}"
            for name in self.roles.always or []
            if name not in aspects
        ]
        named = [*(self.roles.vocabularies or {}), *(self.roles.reference_profile or [])]
        for vocab in dict.fromkeys(named):
            if vocab not in self.vocabularies:
                problems.append(f"roles names unknown vocabulary {vocab!r}")
                continue
            fname = self.vocabulary_fields.get(vocab)
            if fname is None:
                problems.append(f"roles vocabulary {vocab!r} has no field in vocabulary_fields")
            elif fname in self.fields and "in" not in self.fields[fname].filter:
                problems.append(f"roles vocabulary {vocab!r}: its field {fname!r} must allow in")
        for vocab, role in (self.roles.vocabularies or {}).items():
            if role is not None and self.role_aspect(role) is None:
                problems.append(f"roles.vocabularies.{vocab} routes to {role!r}: no aspect has it")
        for vocab, values in self.constraint_fields.hard_values.items():
            allowed = self.vocabularies.get(vocab)
            if allowed is None or vocab not in self.vocabulary_fields:
                problems.append(f"constraint_fields.hard_values names {vocab!r}: no vocabulary")
                continue
            problems += [
                f"constraint_fields.hard_values value {v!r} is not in vocabulary {vocab!r}"
                for v in values
                if v not in allowed
            ]
        return problems

    def _intent_problems(self) -> list[str]:
        """Problems of ``constraint_fields`` and ``capabilities``: roles on unknown fields or
        fields of the wrong type or operators, values outside the field's vocabulary, unknown
        capability vocabularies."""
        problems: list[str] = []
        roles = self.constraint_fields
        for role, (types, ops) in _ROLE_NEEDS.items():
            fname = getattr(roles, role)
            if fname is None:
                continue
            fdef = self.fields.get(fname)
            if fdef is None:
                problems.append(f"constraint_fields.{role} names unknown field {fname!r}")
                continue
            if fdef.type not in types:
                problems.append(f"constraint_fields.{role} field {fname!r} is a {fdef.type}")
            if not ops <= set(fdef.filter):
                problems.append(
                    f"constraint_fields.{role} field {fname!r} must allow {sorted(ops)}"
                )
            allowed = set(self.vocabularies.get(fdef.vocabulary or "", {}))
            for values_name in _ROLE_VALUES.get(role, ()):
                for value in getattr(roles, values_name):
                    if value not in allowed:
                        problems.append(
                            f"constraint_fields.{values_name} value {value!r} is not in the "
                            f"vocabulary of {fname!r}"
                        )
        for role, names in _ROLE_VALUES.items():
            if getattr(roles, role) is None and any(getattr(roles, n) for n in names):
                problems.append(f"constraint_fields gives values for {role} but no field")
        if self.capabilities is not None:
            problems += [
                f"capabilities names unknown vocabulary {v!r}"
                for v in self.capabilities.vocabularies
                if v not in self.vocabularies
            ]
        return problems

    # ----- derived views -------------------------------------------------------------------

    @property
    def source(self) -> Path | None:
        """The YAML file this schema was read from (None: a built-in or one built in code)."""
        return self._source

    @property
    def name_fields(self) -> list[str]:
        """The fields that name a record (the entity spec's, else the title field)."""
        if self.entities is not None and self.entities.names:
            return list(self.entities.names)
        return [self.title_field]

    def role_aspect(self, role: str) -> str | None:
        """The aspect playing ``role`` (:data:`ASPECT_ROLES`): the declared one; for
        ``identity`` the first aspect when none is declared; else None."""
        name = getattr(self.roles.aspects, role)
        if name is None and role == "identity":
            return self.aspects[0].name
        return name  # type: ignore[no-any-return]

    @cached_property
    def always_aspects(self) -> list[str]:
        """The aspects searched with the query text in every plan beside identity
        (``roles.always``; by default, with no aspect role declared, every aspect but the
        first and the whole-record one), in schema order."""
        if self.roles.always is not None:
            wanted = set(self.roles.always)
        elif any(getattr(self.roles.aspects, r) is not None for r in ASPECT_ROLES):
            return []
        else:  # the whole-record aspect has a routing of its own (see the planner)
            wanted = {a.name for a in self.aspects} - {self.record_aspect}
        identity = self.role_aspect("identity")
        return [a.name for a in self.aspects if a.name in wanted and a.name != identity]

    @cached_property
    def constraint_vocabularies(self) -> set[str]:
        """The vocabularies of the fields the constraint phrases set (pricing, deployment):
        their values are read as hard constraints, never as preferences."""
        roles = self.constraint_fields
        return {
            vocab
            for f in (roles.pricing, roles.deployment)
            if f and f in self.fields and (vocab := self.fields[f].vocabulary)
        }

    @cached_property
    def vocabulary_routes(self) -> dict[str, str | None]:
        """Each preference vocabulary -> the aspect role its matched values route to (None:
        a preference only), in preference order (see :class:`Roles`)."""
        if self.roles.vocabularies is not None:
            return dict(self.roles.vocabularies)
        return {
            v: None
            for v, f in self.vocabulary_fields.items()
            if v not in self.constraint_vocabularies
            and f in self.fields
            and "in" in self.fields[f].filter
        }

    def vocabularies_for(self, role: str) -> list[str]:
        """The vocabularies routed to the aspect role ``role``, in preference order."""
        return [v for v, r in self.vocabulary_routes.items() if r == role]

    @cached_property
    def reference_vocabularies(self) -> list[str]:
        """The vocabularies a reference record is searched by (query by example)."""
        if self.roles.reference_profile is not None:
            return list(self.roles.reference_profile)
        return self.vocabularies_for("capability")

    @property
    def aspect_names(self) -> list[str]:
        """Names of the aspects, i.e. the named dense vectors of the collection."""
        return [a.name for a in self.aspects]

    @property
    def record_aspect(self) -> str:
        """The aspect that embeds the whole record: the one marked ``whole_record``, else the
        only aspect of a one-aspect schema (the documents domain's ``content``); empty when
        a schema of several aspects marks none."""
        for a in self.aspects:
            if a.whole_record:
                return a.name
        return self.aspects[0].name if len(self.aspects) == 1 else ""

    def aspect(self, name: str) -> Aspect:
        """Return the aspect called ``name``; raises ``KeyError`` if the schema has none."""
        for a in self.aspects:
            if a.name == name:
                return a
        raise KeyError(f"unknown aspect {name!r}; known: {self.aspect_names}")

    @property
    def filterable_fields(self) -> dict[str, FieldDef]:
        """Fields that allow at least one filter operator (the filter allowlist)."""
        return {k: v for k, v in self.fields.items() if v.filter}

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 (hex, 16 chars) of the schema content: part of cache keys and content hashes."""
        content = self.model_dump(mode="json")
        if content.get("access") is None:  # a schema without access keeps its fingerprint
            content.pop("access", None)
        # the tuning's changes only: a schema on the defaults keeps its fingerprint, a changed
        # knob changes the answers (and so the cache keys)
        content.pop("tuning", None)
        if changed := self.tuning.differences():
            content["tuning"] = changed
        blob = json.dumps(content, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    @cached_property
    def record_model(self) -> type[BaseModel]:
        """A pydantic model validating one catalog record against this schema's fields."""
        definitions: dict[str, Any] = {}
        for fname, fdef in self.fields.items():
            item: Any
            if fdef.vocabulary:
                item = Literal[tuple(self.vocabularies[fdef.vocabulary])]  # type: ignore[misc]
            elif fdef.type == "number":  # finite, within the declared bounds
                item = Annotated[
                    float, Field(allow_inf_nan=False, ge=fdef.minimum, le=fdef.maximum)
                ]
            elif fdef.type == "integer":  # 2026 and 2026.0 alike, kept as 2026; not 2026.5
                item = Annotated[int, Field(ge=fdef.minimum, le=fdef.maximum)]
            elif fdef.type == "string" and fdef.pattern:
                item = Annotated[str, StringConstraints(pattern=_full(fdef.pattern))]
            else:
                item = {"string": str, "number": float, "boolean": bool, "list": str}[fdef.type]
            annotation: Any = list[item] if fdef.type == "list" else item
            if fdef.nullable or not fdef.required:
                annotation = annotation | None
            if fdef.required and fdef.type == "list":
                default: Any = Field(min_length=1)
            elif fdef.required and fdef.type == "string" and not fdef.vocabulary:
                default = Field(min_length=1)
            elif fdef.required:
                default = ...
            else:
                default = None
            definitions[fname] = (annotation, default)
        return create_model(  # type: ignore[call-overload,no-any-return]
            f"{self.name.title()}Record",
            __config__=ConfigDict(extra="allow", strict=False),
            **definitions,
        )

    def validate_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """Validate and normalize one record; returns a plain dict.

        Raises:
            RecordError: with one readable line per problem (field and reason).
        """
        try:
            model = self.record_model.model_validate(record)
        except ValidationError as exc:
            reasons = []
            for err in exc.errors():
                where = ".".join(str(p) for p in err["loc"]) or "record"
                reasons.append(f"{where}: {err['msg']}")
            raise RecordError("; ".join(reasons)) from None
        data = model.model_dump()
        for fname, fdef in self.fields.items():
            if fdef.type == "list" and data.get(fname) is None:
                data[fname] = []
        data[self.id_field] = str(data[self.id_field])
        return data


def _full(pattern: str) -> str:
    """``pattern`` anchored at both ends (a field's pattern matches the whole value)."""
    return (
        ("" if pattern.startswith("^") else "^") + pattern + ("" if pattern.endswith("$") else "$")
    )


class RecordError(ValueError):
    """A catalog record that does not satisfy its domain schema."""


_BUILTIN = {"tools", "documents"}
#: PyYAML's safe loader, on libyaml when PyYAML was built with it: the same documents, parsed
#: in C (every command parses a schema before it does anything; a cache hit does little else).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: The folder under the home (``AGENTIC_SEARCH_HOME``) holding the registered domains, one
#: ``<name>.yaml`` each: a copy of the YAML a catalog was last ingested with.
DOMAINS_FOLDER = "domains"


def available_domains() -> list[str]:
    """Names of the built-in domain schemas, sorted (a home's registered ones:
    :func:`registered_domains`)."""
    return sorted(_BUILTIN)


def registered_domains(
    home: Path | None = None, files: Sequence[Path] = ()
) -> dict[str, Path | None]:
    """Every domain a process knows, name -> its YAML file (None: built-in): the built-ins,
    then each ``<home>/domains/<name>.yaml`` (:func:`register_domain` writes them), then
    ``files`` by the name their schema declares (one of them replaces the registered copy of
    its name). A built-in's name always means the built-in. Ordered: built-ins sorted, then
    the others sorted.

    Raises:
        SchemaError: for one of ``files`` that is missing or invalid, or that declares a
            built-in's name.
    """
    found: dict[str, Path] = {}
    folder = home / DOMAINS_FOLDER if home is not None else None
    if folder is not None and folder.is_dir():
        found.update({p.stem: p for p in folder.glob("*.yaml") if p.stem not in _BUILTIN})
    for path in files:
        schema = load_schema(path)
        if schema.name in _BUILTIN:
            raise SchemaError(
                f"{path} declares the name {schema.name!r} of a built-in domain: give your "
                "domain a name of its own (name: in the YAML)"
            )
        found[schema.name] = Path(path)
    return {**dict.fromkeys(sorted(_BUILTIN)), **dict(sorted(found.items()))}


def load_domain(
    name_or_path: str | Path, home: Path | None = None, files: Sequence[Path] = ()
) -> DomainSchema:
    """The schema of a built-in or registered domain by name (:func:`registered_domains`
    over ``home`` and ``files``), else of the YAML file at ``name_or_path``.

    Raises:
        SchemaError: for an unknown name that is no YAML file, or an invalid schema.
    """
    key = str(name_or_path)
    if key in _BUILTIN:
        return _load_builtin(key)
    if home is not None or files:
        known = registered_domains(home, files)
        if known.get(key) is not None:
            return load_schema(known[key])  # type: ignore[arg-type]
        if not Path(key).is_file():
            where = f" or registered in {home / DOMAINS_FOLDER}" if home is not None else ""
            raise SchemaError(
                f"unknown domain {key!r}: not a built-in{where} (known: {', '.join(known)}) "
                "and no such YAML file (`agentic-search ingest FILE --domain YOUR.yaml` "
                "registers a domain under the name its YAML declares)"
            )
    return load_schema(key)


def register_domain(home: Path, schema: DomainSchema) -> Path | None:
    """Keep ``schema``'s YAML as ``<home>/domains/<name>.yaml`` (written atomically, only
    when its text changed), so the name alone finds it (``search --domain NAME``, ``serve``,
    the HTTP API). Returns that path; None for a schema read from no file, one already read
    from there, or one with a built-in's name (never registered).

    Raises:
        OSError: when the folder or the file cannot be written.
    """
    source = schema.source
    if source is None or schema.name in _BUILTIN:
        return None
    dest = home / DOMAINS_FOLDER / f"{schema.name}.yaml"
    if source.resolve() == dest.resolve():
        return dest
    text = source.read_bytes()
    if dest.is_file() and dest.read_bytes() == text:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".yaml.{os.getpid()}.tmp")
    tmp.write_bytes(text)
    os.replace(tmp, dest)
    return dest


def domain_argument(schema: DomainSchema) -> str:
    """What ``--domain`` takes to name ``schema`` again: a built-in's or a registered
    domain's name, else the path of the YAML it was read from (absolute)."""
    source = schema.source
    if source is None or (source.parent.name == DOMAINS_FOLDER and source.stem == schema.name):
        return schema.name
    return str(source.resolve())


def load_schema(name_or_path: str | Path) -> DomainSchema:
    """Load a domain schema by built-in name (``tools``, ``documents``) or YAML path.

    Raises:
        SchemaError: when the file is missing or the schema is inconsistent (reasons listed).
    """
    key = str(name_or_path)
    if key in _BUILTIN:
        return _load_builtin(key)
    path = Path(key)
    if not path.is_file():
        raise SchemaError(
            f"unknown domain {key!r}: not a built-in ({', '.join(sorted(_BUILTIN))}) "
            "and no such YAML file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(
            f"invalid domain schema in {path}: not UTF-8 text (byte {exc.start})"
        ) from None
    except OSError as exc:
        raise SchemaError(f"cannot read domain schema {path}: {exc.strerror or exc}") from None
    schema = _parse(text, str(path))
    schema._source = path
    return schema


@lru_cache(maxsize=8)
def _load_builtin(name: str) -> DomainSchema:
    text = (resources.files("agentic_search") / "domains" / f"{name}.yaml").read_text("utf-8")
    return _parse(text, f"built-in domain {name!r}")


def _parse(text: str, origin: str) -> DomainSchema:
    """The schema in the YAML ``text``; every problem is a one-line :class:`SchemaError`
    naming ``origin`` (not YAML, not a mapping, the first invalid fields)."""
    try:
        raw = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SchemaError(f"invalid domain schema in {origin}: not valid YAML{where}") from None
    if not isinstance(raw, dict):
        raise SchemaError(
            f"invalid domain schema in {origin}: expected a YAML mapping of a domain schema "
            f"(name, fields, aspects, ...), got {type(raw).__name__}"
        )
    try:
        return DomainSchema.model_validate(raw)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'schema'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        ]
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        reasons = "; ".join(" ".join(p.split()) for p in problems[:3])
        raise SchemaError(f"invalid domain schema in {origin}: {reasons}{more}") from None
