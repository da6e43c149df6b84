"""Rocchio feedback for the dense side: the query vector moved toward the feedback documents'
stored vectors (J. J. Rocchio, "Relevance Feedback in Information Retrieval", in *The SMART
Retrieval System*, 1971), positive feedback only: ``q' = a * q/|q| + (1 - a) * mean(d/|d|)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def rocchio_vector(
    query: Sequence[float] | np.ndarray,
    feedback: Sequence[Sequence[float] | np.ndarray],
    alpha: float,
) -> np.ndarray:
    """Rocchio's positive-feedback query vector, as a unit float32 vector of the query's
    dimension: ``alpha * q/|q| + (1 - alpha) * mean(d/|d|)`` over the ``feedback`` vectors
    (each normalized first, so a long document does not outweigh a short one).

    With no feedback vectors it is the normalized query. Raises ``ValueError`` when a
    feedback vector's dimension differs from the query's or ``alpha`` is outside [0, 1].
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    q = np.asarray(query, dtype=np.float32)
    out = q / (np.linalg.norm(q) or 1.0)
    if len(feedback):
        docs = np.asarray(feedback, dtype=np.float32).reshape(len(feedback), -1)
        if docs.shape[1] != q.shape[0]:
            raise ValueError(f"feedback vectors have dimension {docs.shape[1]}, query {q.shape[0]}")
        norms = np.linalg.norm(docs, axis=1, keepdims=True)
        centroid = (docs / np.where(norms > 0, norms, 1.0)).mean(axis=0)
        out = alpha * out + (1.0 - alpha) * centroid
    return out / (np.linalg.norm(out) or 1.0)
