"""Needs read by meaning: a query that names a job ("make a short explainer video from my
slides") rather than a category is matched against the domain's capability vocabulary entries
by embedding, not by hand-written lists of task phrases.

Each entry of the schema's ``capabilities.vocabularies`` (a canonical value with its
synonyms, "Video Editing: video editing, edit videos") is embedded once, as a document, the
first time a query needs it; a query is embedded with the embedder's query side and scored by
cosine (the vectors are L2-normalized, so the dot product) against every entry. Entries at or
above the threshold calibrated for the embedder's model (``capabilities.min_score``, or the
schema's ``calibrations`` entry for that model) are the query's capabilities, best first, at most
``capabilities.max_matches``. The matcher holds no model of its own: it is given the
embedding functions (the :class:`~agentic_search.ports.Embedder` port's), so this module
stays pure.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentic_search.logic.schema import DomainSchema
from agentic_search.wire import VocabularyMatch

if TYPE_CHECKING:
    import numpy as np


def entry_texts(schema: DomainSchema) -> list[tuple[str, str, str]]:
    """``(vocabulary, canonical value, text to embed)`` for every entry of the schema's
    capability vocabularies, in schema order; the text is the value and its synonyms."""
    spec = schema.capabilities
    out: list[tuple[str, str, str]] = []
    for vocab in spec.vocabularies if spec else []:
        for canonical, synonyms in schema.vocabularies.get(vocab, {}).items():
            words = [s for s in synonyms if s.lower() != canonical.lower()]
            text = canonical + (": " + ", ".join(words) if words else "")
            out.append((vocab, canonical, text))
    return out


class CapabilityMatcher:
    """Matches a query to capability vocabulary entries by cosine (see the module docstring).

    ``embed_documents(texts) -> (n, dim)`` and ``embed_query(text) -> (dim,)`` are the
    embedder's; both must return L2-normalized float vectors. Thread-safe: the entries are
    embedded once, under a lock, on the first :meth:`match`. With ``memo`` (an
    :class:`~agentic_search.ports.ArrayMemo`'s ``get_or_compute``) and ``identity`` (the
    embedder identity as JSON), the entries' vectors are kept between processes under a hash
    of both and the entry texts (:meth:`matrix_key`): a new process reads them instead of
    embedding them again.
    """

    def __init__(
        self,
        schema: DomainSchema,
        embed_documents: Callable[[Sequence[str]], Any],
        embed_query: Callable[[str], Any],
        model: Callable[[], str] | None = None,
        memo: Callable[[str, Callable[[], Any], tuple[int, ...]], Any] | None = None,
        identity: Callable[[], str] | None = None,
    ) -> None:
        spec = schema.capabilities
        self.min_score = spec.min_score if spec else 1.0
        self.max_matches = spec.max_matches if spec else 0
        self.calibrated_for = list(spec.calibrated_for) if spec else []
        self._schema = schema
        self._model = model
        self.entries = entry_texts(schema)
        self._embed_documents = embed_documents
        self._embed_query = embed_query
        self._memo = memo
        self._identity = identity
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()

    def matrix_key(self, identity: str) -> str:
        """The memo key of the entries' vectors under the embedder ``identity`` (JSON): a
        sha256 over it and every entry's vocabulary, value and text."""
        digest = hashlib.sha256(identity.encode())
        for entry in self.entries:
            digest.update(("\x1e" + "\x1f".join(entry)).encode())
        return f"capabilities-{digest.hexdigest()}"

    def matrix(self) -> np.ndarray:
        """The entries' vectors, ``(len(entries), dim)`` float32, embedded once (read from
        the memo when one is given and holds them)."""
        import numpy as np  # the ExtractIntent function has no numpy: imported on first use

        with self._lock:
            if self._matrix is None:
                texts = [t for *_, t in self.entries]

                def embed() -> np.ndarray:
                    return np.asarray(self._embed_documents(texts), dtype=np.float32)

                if self._memo is None or self._identity is None:
                    self._matrix = embed()
                else:
                    identity = self._identity()
                    dim = json.loads(identity).get("dim")
                    if isinstance(dim, int):
                        key = self.matrix_key(identity)
                        kept = self._memo(key, embed, (len(texts), dim))
                        self._matrix = np.asarray(kept, dtype=np.float32)
                    else:  # a dimension learnt from the first answer: nothing to check against
                        self._matrix = embed()
            return self._matrix

    def scores(self, text: str) -> list[VocabularyMatch]:
        """Every entry scored against ``text`` (cosine), best first."""
        if not self.entries or not text.strip():
            return []
        import numpy as np

        q = np.asarray(self._embed_query(text), dtype=np.float32).reshape(-1)
        sims = self.matrix() @ q
        order = np.argsort(-sims, kind="stable")
        return [
            VocabularyMatch(
                vocabulary=self.entries[i][0],
                value=self.entries[i][1],
                score=round(float(max(-1.0, min(1.0, sims[i]))), 3),
            )
            for i in order
        ]

    def threshold(self) -> float | None:
        """The cosine an entry needs under this embedder
        (:meth:`~agentic_search.logic.schema.DomainSchema.capability_min_score_for` of the
        model ``model()`` gives): the schema's ``calibrations`` entry for that model, else
        ``min_score`` when it was calibrated for it; None (the step is off) otherwise."""
        return self._schema.capability_min_score_for(self._model() if self._model else None)

    def calibrated(self) -> bool:
        """Whether a threshold applies to this embedder (:meth:`threshold` is not None)."""
        return self.threshold() is not None

    def match(self, text: str) -> list[VocabularyMatch]:
        """The entries at or above :meth:`threshold`, best first, at most ``max_matches``;
        none when no threshold was calibrated for this embedder's model."""
        threshold = self.threshold()
        if self.max_matches <= 0 or threshold is None:
            return []
        return [m for m in self.scores(text) if m.score >= threshold][: self.max_matches]


__all__ = ["CapabilityMatcher", "entry_texts"]
