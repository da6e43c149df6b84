"""The identity of the embedder that built a collection (stored with the collection).

Vectors of two embedders are not comparable: a query embedded by one model and searched
against documents embedded by another gives plausible-looking nonsense, and a different
dimension fails deep inside the engine. So every vector store records the
:class:`EmbedderIdentity` of the embedder that first wrote a collection, and ingest, sync and
search compare it with the current one (:mod:`agentic_search.logic.embedder_identity`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_COMPARED = (
    "model",
    "dim",
    "normalized",
    "max_length",
    "pooling",
    "query_prefix",
    "passage_prefix",
    "artefact",
)


class EmbedderIdentity(BaseModel):
    """What makes two embedders' vectors comparable: the model, the dimension, whether the
    vectors are L2-normalised, the truncation length (word-piece tokens; a longer text is
    cut there, so two lengths give different document vectors), the pooling and the texts
    put before queries and documents (e5's ``query: `` / ``passage: ``), and for a model
    converted here the hash of the files that compute it (``artefact``: two conversions or
    quantizations of one model give different vectors).

    A field that is ``None`` is unknown (an embedder that cannot tell without a call, such as
    an API whose dimension is learnt from its first answer) and is not compared. Stored as
    JSON with these field names; unknown keys from a later version are ignored.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    model: str = Field(min_length=1, description="Model id, e.g. amazon.titan-embed-text-v2:0.")
    dim: int | None = Field(default=None, ge=1, description="Vector dimension.")
    normalized: bool | None = Field(default=None, description="Vectors are L2-normalised.")
    max_length: int | None = Field(
        default=None, ge=1, description="Truncation length in tokens (None: the model's own)."
    )
    pooling: str | None = Field(default=None, description="Token pooling, e.g. mean.")
    query_prefix: str | None = Field(
        default=None, description="Text put before a query (e5: 'query: ')."
    )
    passage_prefix: str | None = Field(
        default=None, description="Text put before a document (e5: 'passage: ')."
    )
    artefact: str | None = Field(
        default=None,
        description="sha256 of the model files that compute the vectors (a converted model).",
    )

    def describe(self) -> str:
        """One line for messages, e.g. ``all-MiniLM-L6-v2-int8 (384 dims, normalized, max
        256 tokens)``; unknown fields are left out."""
        parts = []
        if self.dim is not None:
            parts.append(f"{self.dim} dims")
        if self.normalized is not None:
            parts.append("normalized" if self.normalized else "not normalized")
        if self.max_length is not None:
            parts.append(f"max {self.max_length} tokens")
        if self.pooling is not None:
            parts.append(f"{self.pooling} pooling")
        if self.query_prefix or self.passage_prefix:
            parts.append(f"prefixes {self.query_prefix!r}/{self.passage_prefix!r}")
        if self.artefact is not None:
            parts.append(f"artefact {self.artefact[:12]}")
        return f"{self.model} ({', '.join(parts)})" if parts else self.model

    def differences(self, other: EmbedderIdentity) -> list[str]:
        """The fields (``model``, ``dim``, ``normalized``, ``max_length``, ``pooling``,
        ``query_prefix``, ``passage_prefix``, ``artefact``) on which ``self`` and ``other``
        differ, each compared only where both know it; empty = compatible."""
        out = []
        for name in _COMPARED:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is not None and theirs is not None and mine != theirs:
                out.append(name)
        return out

    def merged(self, other: EmbedderIdentity) -> EmbedderIdentity:
        """``self`` with the fields it does not know taken from ``other`` (a store that
        recorded an unknown dimension learns it on a later write)."""
        known = {k: v for k, v in self.model_dump().items() if v is not None}
        return EmbedderIdentity(**{**other.model_dump(), **known})

    def to_json_dict(self) -> dict[str, Any]:
        """The stored form (a JSON object; unknown fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)


__all__ = ["EmbedderIdentity"]
