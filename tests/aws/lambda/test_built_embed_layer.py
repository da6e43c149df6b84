"""The built Lambda layers (``sam build``: .aws-sam/build/{CoreLayer,EmbedLayer}) embed on the
functions' runtime, python3.12, with no fastembed, PIL or huggingface_hub, and give the local
embedder's vectors to 1e-5. Skipped when the build or a python3.12 is absent (`make validate`
builds the layers; scripts/validate-template.sh finds python3.12 the same way)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.paths import REPO

BUILD = REPO / ".aws-sam" / "build"
LAYERS = [BUILD / "CoreLayer" / "python", BUILD / "EmbedLayer" / "python"]
TEXTS = [
    "AI code completion tools that work locally",
    "free alternative to Cursor",
    "",
    "vector database with hybrid search " * 60,
]

CHILD = """
import importlib.util, json, sys
import onnxruntime
import agentic_search.adapters.onnx_embedder as onnx_embedder
from agentic_search.config import Settings
from agentic_search.wiring import build_embedder

texts = json.loads(sys.stdin.read())
embedder = build_embedder(Settings())  # EMBEDDING_MODEL unset: the default local embedder
print(json.dumps({
    "version": list(sys.version_info[:2]),
    "class": type(embedder).__name__,
    "files": [onnx_embedder.__file__, onnxruntime.__file__],
    "absent": [m for m in ("fastembed", "PIL", "huggingface_hub")
               if importlib.util.find_spec(m) is None],
    "queries": embedder.embed_queries(texts).tolist(),
    "documents": embedder.embed_documents(texts).tolist(),
}))
"""


def python312() -> str | None:
    """A python3.12 that runs: on PATH, else the newest pyenv 3.12.x."""
    found = shutil.which("python3.12")
    candidates = [found] if found else []
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(
        (str(p / "bin" / "python3.12") for p in root.glob("3.12.*")),
        key=lambda s: [int(x) for x in Path(s).parents[1].name.split(".") if x.isdigit()],
        reverse=True,
    )
    for exe in candidates:
        ok = subprocess.run([exe, "-c", "import sys"], capture_output=True, check=False)
        if ok.returncode == 0:
            return exe
    return None


def test_built_embed_layer_gives_the_local_embedders_vectors_on_python312(embedder, tmp_path):
    if not all(p.is_dir() for p in LAYERS):
        pytest.skip("no built layers: run `make validate` (sam build)")
    exe = python312()
    if exe is None:
        pytest.skip("no python3.12 on PATH or in pyenv")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(str(p) for p in LAYERS),
        "PYTHONNOUSERSITE": "1",
        "AGENTIC_SEARCH_HOME": str(tmp_path),
        "HOME": str(tmp_path),
    }
    # WHEN the default embedder of the built layers embeds on python3.12
    done = subprocess.run(
        [exe, "-c", CHILD],
        input=json.dumps(TEXTS),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    # THEN it ran from the built layers, on 3.12, the ONNX embedder, without the fastembed stack
    assert out["version"] == [3, 12]
    assert out["class"] == "OnnxMiniLMEmbedder"
    assert all(f.startswith(str(BUILD)) for f in out["files"]), out["files"]
    assert out["absent"] == ["fastembed", "PIL", "huggingface_hub"]
    # AND its vectors are the local (fastembed) embedder's to 1e-5
    queries, documents = np.array(out["queries"]), np.array(out["documents"])
    assert np.abs(queries - embedder.embed_queries(TEXTS)).max() <= 1e-5
    assert np.abs(documents - embedder.embed_documents(TEXTS)).max() <= 1e-5
