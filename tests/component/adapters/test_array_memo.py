"""The ``.npy`` folder memo (the ArrayMemo port's adapter): what one process keeps, the next
reads; a wrong shape, a torn file or a folder it cannot write costs a recompute, never an
error or a wrong array."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentic_search.adapters.array_memo import NpyFolderMemo


class Counter:
    def __init__(self, array: np.ndarray) -> None:
        self.array, self.calls = array, 0

    def __call__(self) -> np.ndarray:
        self.calls += 1
        return self.array


def test_a_kept_array_is_read_by_the_next_memo(tmp_path: Path) -> None:
    """GIVEN an array computed and kept by one memo WHEN a new memo over the folder asks for
    it THEN it is read, bit for bit, without computing; a different shape is computed."""
    array = np.random.default_rng(7).standard_normal((60, 384)).astype(np.float32)
    first, second = Counter(array), Counter(array * 0)
    assert NpyFolderMemo(tmp_path).get_or_compute("k1", first, (60, 384)) is array
    got = NpyFolderMemo(tmp_path).get_or_compute("k1", second, (60, 384))
    assert second.calls == 0 and got.dtype == np.float32 and np.array_equal(got, array)
    other = NpyFolderMemo(tmp_path).get_or_compute("k1", second, (61, 384))
    assert second.calls == 1 and np.array_equal(other, array * 0)


def test_a_torn_file_is_computed_again_and_written_over(tmp_path: Path) -> None:
    """GIVEN a kept file cut in half (a crash of another writer's disk) WHEN it is asked for
    THEN the array is computed again and the file replaced by a whole one."""
    array = np.ones((4, 3), dtype=np.float32)
    NpyFolderMemo(tmp_path).get_or_compute("k", Counter(array), (4, 3))
    path = tmp_path / "k.npy"
    path.write_bytes(path.read_bytes()[:40])
    again = Counter(array)
    assert np.array_equal(NpyFolderMemo(tmp_path).get_or_compute("k", again, (4, 3)), array)
    assert again.calls == 1
    assert np.array_equal(np.load(path), array)
    assert [p.name for p in tmp_path.iterdir()] == ["k.npy"]  # no temporary file left


def test_a_folder_it_cannot_write_costs_a_recompute_not_an_error(tmp_path: Path) -> None:
    """GIVEN a memo folder that cannot be made (its parent is a file: refused even to root)
    WHEN an array is asked for THEN it is computed and returned, twice, with no error."""
    (tmp_path / "file").write_text("")
    memo, compute = NpyFolderMemo(tmp_path / "file" / "m"), Counter(np.ones(2))
    for _ in range(2):
        assert np.array_equal(memo.get_or_compute("k", compute, (2,)), np.ones(2))
    assert compute.calls == 2


def test_a_key_that_is_not_a_file_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="memo key"):
        NpyFolderMemo(tmp_path).get_or_compute("../x", Counter(np.ones(2)), (2,))
