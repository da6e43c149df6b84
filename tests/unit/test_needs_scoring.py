"""The best-need benchmark's scoring (``benchmarks/needs_scoring.py``): a record scores its
best need's cosine, a record with no need scores -inf (absent from a ranking), and a record's
mean need vector is L2-normalised. Pure numpy; no model, no index."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module() -> ModuleType:
    path = ROOT / "benchmarks" / "needs_scoring.py"
    spec = importlib.util.spec_from_file_location("needs_scoring", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NS = _module()


def _unit(rows: list[list[float]]) -> np.ndarray:
    a = np.asarray(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def test_a_record_scores_its_best_need_and_a_record_without_needs_minus_inf() -> None:
    queries = _unit([[1, 0], [0, 1]])
    needs = _unit([[1, 0], [0, 1], [1, 1]])  # record 0: first two; record 2: the third
    scores = NS.best_need_scores(queries, needs, [0, 0, 2], 3)
    expected = np.array([[1.0, -np.inf, 0.7071], [1.0, -np.inf, 0.7071]], dtype=np.float32)
    assert scores.shape == (2, 3)
    assert np.isneginf(scores[:, 1]).all()
    np.testing.assert_allclose(scores[:, [0, 2]], expected[:, [0, 2]], atol=1e-4)


def test_best_need_scores_equal_a_loop_over_each_records_needs() -> None:
    rng = np.random.default_rng(0)
    queries = _unit(rng.normal(size=(5, 8)).tolist())
    needs = _unit(rng.normal(size=(20, 8)).tolist())
    owners = rng.integers(0, 6, size=20).tolist()
    scores = NS.best_need_scores(queries, needs, owners, 7)
    for r in range(7):
        mine = [i for i, o in enumerate(owners) if o == r]
        if not mine:
            assert np.isneginf(scores[:, r]).all()
        else:
            np.testing.assert_allclose(
                scores[:, r], (queries @ needs[mine].T).max(axis=1), atol=1e-6
            )


def test_owners_must_name_one_record_per_need() -> None:
    q = _unit([[1, 0]])
    with pytest.raises(ValueError):
        NS.best_need_scores(q, _unit([[1, 0]]), [0, 0], 1)
    with pytest.raises(ValueError):
        NS.best_need_scores(q, _unit([[1, 0]]), [1], 1)


def test_mean_vectors_are_unit_length_and_zero_for_a_record_without_needs() -> None:
    needs = _unit([[1, 0], [0, 1], [1, 0]])
    means = NS.mean_vectors(needs, [0, 0, 2], 3)
    np.testing.assert_allclose(means[0], [0.7071, 0.7071], atol=1e-4)
    np.testing.assert_allclose(means[1], [0, 0])
    np.testing.assert_allclose(means[2], [1, 0])


def test_rank_keeps_present_records_best_first_ties_by_id() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.1])
    present = np.array([True, True, True, False])
    assert NS.rank(scores, ["b", "a", "a2", "c"], present) == ["a", "a2", "b"]
