"""Thresholds per embedder (issue 28, item 5): a cosine threshold belongs to one model's scale,
so a domain keeps one set per embedder identity (``calibrations``, keyed by the model name the
collection records); MiniLM's stay the schema's own. multilingual-e5-small puts an unrelated
pair near 0.75 (MiniLM near 0.1): with MiniLM's 0.24 every e5 answer was "supported" and none
of the 22 unanswerable tools queries got "no good match"."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_search.config import E5_MODEL_NAME, MINILM_MODEL_NAME, Settings
from agentic_search.dependencies import Dependencies
from agentic_search.logic.capabilities import CapabilityMatcher
from agentic_search.logic.schema import DomainSchema, EmbedderCalibration, QualitySpec
from agentic_search.pipeline.finalize import grade_answer
from agentic_search.wire import (
    Candidate,
    ExecutorCaps,
    ExecutorState,
    IntentState,
    Provenance,
)
from tests.support.builders import plan_with

#: An e5-small cosine of a query to an unrelated catalog entry (docs/guides/embedders.md and
#: docs/benchmarks.md, "Local embedders": related pairs about 0.85-0.9, unrelated ones about 0.75).
E5_UNRELATED = 0.76


def _candidates(n: int) -> list[Candidate]:
    return [
        Candidate(
            id=f"t{i}",
            source="qdrant",
            score=1.0 / (i + 1),
            fused_score=1.0 / (i + 1),
            metadata={},
            provenance=Provenance(collection="tools"),
        )
        for i in range(n)
    ]


def _judge(settings: Settings, schema: DomainSchema, cosine: float) -> tuple[list[str], Any]:
    """Judge ten candidates of an unanswerable query, each at cosine ``cosine``, no other
    evidence (no vocabulary value, not every word, nothing named), coverage 0."""
    query = "restaurant table reservation system"
    cands = _candidates(10)
    state = ExecutorState(
        plan=plan_with(),
        caps=ExecutorCaps(),
        intent=IntentState(query=query, normalized_query=query),
        relevance={c.id: cosine for c in cands},
    )
    kept, quality = grade_answer(Dependencies(settings, schema), state, cands, coverage=0.0)
    return [c.id for c in kept], quality


def test_e5_cosines_of_unrelated_tools_get_no_good_match(tools_schema: DomainSchema) -> None:
    e5 = Settings(embedding_provider="local", local_embedding_model="e5-small")
    kept, quality = _judge(e5, tools_schema, E5_UNRELATED)
    assert quality.verdict == "none"
    assert kept == []


def test_minilm_keeps_its_own_thresholds(tools_schema: DomainSchema) -> None:
    minilm = Settings(embedding_provider="local", local_embedding_model="minilm")
    assert tools_schema.quality_for(MINILM_MODEL_NAME) == tools_schema.quality
    assert minilm.embedder_model == MINILM_MODEL_NAME
    # the same cosine is strong evidence on MiniLM's scale
    kept, quality = _judge(minilm, tools_schema, E5_UNRELATED)
    assert quality.verdict != "none" and len(kept) == 10


def test_the_bundled_tools_schema_has_e5_thresholds_of_its_own(
    tools_schema: DomainSchema,
) -> None:
    e5 = tools_schema.quality_for(E5_MODEL_NAME)
    assert e5 != tools_schema.quality
    # on e5's scale the support threshold sits above an unrelated pair's cosine
    assert e5.candidate_relevance > E5_UNRELATED
    # no capability threshold separates right from wrong on e5's scale (tools.yaml): the
    # capability step is off under it
    assert tools_schema.capability_min_score_for(E5_MODEL_NAME) is None


def _schema_with(base: DomainSchema, **calibrations: EmbedderCalibration) -> DomainSchema:
    return base.model_copy(update={"calibrations": calibrations})


def test_quality_for_picks_the_models_entry_else_the_schemas(tools_schema: DomainSchema) -> None:
    own = QualitySpec(min_relevance=0.9, candidate_relevance=0.8, candidate_floor=0.7)
    schema = _schema_with(tools_schema, m5=EmbedderCalibration(quality=own))
    assert schema.quality_for("m5") == own
    assert schema.quality_for("other") == schema.quality
    assert schema.quality_for(None) == schema.quality
    only_caps = _schema_with(tools_schema, m5=EmbedderCalibration(capability_min_score=0.8))
    assert only_caps.quality_for("m5") == tools_schema.quality


def test_capability_threshold_per_model(tools_schema: DomainSchema) -> None:
    spec = tools_schema.capabilities
    assert spec is not None and spec.calibrated_for == [MINILM_MODEL_NAME]
    schema = _schema_with(tools_schema, m5=EmbedderCalibration(capability_min_score=0.83))
    assert schema.capability_min_score_for("m5") == 0.83
    assert schema.capability_min_score_for(MINILM_MODEL_NAME) == spec.min_score
    assert schema.capability_min_score_for(None) == spec.min_score
    assert schema.capability_min_score_for("uncalibrated") is None  # the step is off


def test_later_dense_weight_per_model(tools_schema: DomainSchema) -> None:
    """A model's entry may set the later rounds' dense weight; without one the schema's own
    (chosen with MiniLM) applies."""
    schema = _schema_with(tools_schema, m5=EmbedderCalibration(later_dense_weight=0.25))
    assert schema.later_dense_weight_for("m5") == 0.25
    assert schema.later_dense_weight_for("other") == tools_schema.later_dense_weight
    assert schema.later_dense_weight_for(None) == tools_schema.later_dense_weight
    with pytest.raises(ValueError):
        EmbedderCalibration(later_dense_weight=1.5)


def test_a_calibration_is_validated(tools_schema: DomainSchema) -> None:
    with pytest.raises(ValueError):
        DomainSchema.model_validate(
            {
                **tools_schema.model_dump(),
                "calibrations": {"m5": {"capability_min_score": 1.5}},
            }
        )
    with pytest.raises(ValueError):
        DomainSchema.model_validate(
            {**tools_schema.model_dump(), "calibrations": {"m5": {"min_score": 0.8}}}
        )


class _Constant:
    """Every entry and every query embed to the same unit vector: every cosine is 1.0."""

    def embed_documents(self, texts: Any) -> Any:
        import numpy as np

        return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    def embed_query(self, text: str) -> Any:
        import numpy as np

        return np.ones(2, dtype=np.float32) / np.sqrt(2)


def test_the_matcher_reads_the_models_threshold(tools_schema: DomainSchema) -> None:
    emb = _Constant()
    calibrated = _schema_with(tools_schema, m5=EmbedderCalibration(capability_min_score=0.99))
    on = CapabilityMatcher(calibrated, emb.embed_documents, emb.embed_query, model=lambda: "m5")
    assert on.threshold() == 0.99 and len(on.match("anything at all")) == 1
    off = CapabilityMatcher(tools_schema, emb.embed_documents, emb.embed_query, model=lambda: "m5")
    assert off.threshold() is None and off.match("anything at all") == []


@pytest.mark.parametrize(
    "env",
    [
        {"embedding_provider": "local", "local_embedding_model": "minilm"},
        {"embedding_provider": "local", "local_embedding_model": "e5-small"},
        {"embedding_provider": "auto", "embedding_model": "text-embedding-3-small"},
        {"embedding_provider": "bedrock"},
    ],
)
def test_the_settings_name_the_model_the_embedder_records(env: dict[str, str]) -> None:
    from agentic_search.logic.embedder_identity import identity_of
    from agentic_search.wiring import build_embedder

    settings = Settings(**env)
    # construction does no I/O (files, sessions and clients on first use)
    assert settings.embedder_model == identity_of(build_embedder(settings)).model


def test_the_bundled_documents_schema_has_an_e5_floor_of_its_own() -> None:
    """GIVEN the documents domain WHEN its thresholds are read for e5-small THEN the no-match
    floor sits on e5's scale (SciFact train's lowest first-hit cosine is 0.812 there, 0.296
    under MiniLM): above an unrelated pair's cosine, so an e5 answer to nothing in the corpus
    can get "no good match"; MiniLM's own stay the schema's."""
    from agentic_search.logic.schema import load_schema

    documents = load_schema("documents")
    e5 = documents.quality_for(E5_MODEL_NAME)
    assert documents.quality_for(MINILM_MODEL_NAME) == documents.quality
    assert e5.min_relevance > E5_UNRELATED and e5.candidate_relevance > E5_UNRELATED
    assert e5.min_relevance < 0.812  # under every answerable SciFact train query
    assert e5.min_coverage == documents.quality.min_coverage  # coverage is not a cosine


def test_embeddinggemma_never_runs_on_minilms_thresholds(tools_schema: DomainSchema) -> None:
    """GIVEN the tools domain WHEN its thresholds are read for an EmbeddingGemma model THEN
    they are its own entry's (chosen on its tuning run), not MiniLM's, and the capability step
    is off under it (no threshold separated right from wrong matches: tools.yaml)."""
    from agentic_search.config import gemma_model_name

    for quantization, dim in [("fp32", 768), ("int8", 768), ("int8", 256), ("fp32", 256)]:
        model = gemma_model_name(quantization, dim)
        gemma = tools_schema.quality_for(model)
        assert gemma != tools_schema.quality
        assert gemma.candidate_relevance > tools_schema.quality.candidate_relevance
        assert tools_schema.capability_min_score_for(model) is None
        assert tools_schema.later_dense_weight_for(model) == 1.0
    # a dimension nobody calibrated falls back to the schema's own, with the step off
    uncalibrated = gemma_model_name("fp32", 128)
    assert tools_schema.quality_for(uncalibrated) == tools_schema.quality
    assert tools_schema.capability_min_score_for(uncalibrated) is None
