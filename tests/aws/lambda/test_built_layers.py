"""The built Lambda layers (``sam build``: .aws-sam/build/<Layer>/python) are their lock files,
lean, and give the same results as the unmodified wheels.

* Each layer's installed distributions are exactly its requirements.txt pins (the lock file).
* The core layer's shared objects are stripped (``--strip-unneeded``) and still compute what the
  test environment's own wheels compute: numpy, igraph's PageRank, rapidfuzz, PyYAML's C loader,
  PyStemmer, run on python3.12 from the build.
* The embed layer leaves out onnxruntime's C API library (the Python binding does not load it).
* Every module a function's cold start imports from a layer has its precompiled .pyc (the core
  layer leaves some unused namespaces uncompiled: this says they are unused at cold start).
* Sizes (MiB = 2**20 bytes, unzipped, a function with its layers): every function that embeds
  is at most 225 MiB, every other at most 155 MiB but McpFunction (the MCP SDK's layer), 20 MiB
  more (Lambda's limit is 250 MiB), in a stack of either vector engine. Both budgets grew by the
  Edge engine (qdrant-edge-py) when CoreLayer took it for VectorEngine=edge-s3; qdrant-client
  and grpc are QdrantLayer's, attached to every function with VectorEngine=qdrant only.
* CoreLayer holds no Qdrant server client (nor grpc, protobuf, httpx); QdrantLayer over
  CoreLayer builds a client and a filter as QdrantStore does.
* The MCP layer answers a recorded ``tools/list`` over the core layer (McpFunction's handler).

Skipped when the build or a python3.12 is absent (`make validate` builds the layers)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.paths import REPO, SCRIPTS

sys.path.insert(0, str(SCRIPTS))
from built_sizes import MB, _CfnLoader, folder_bytes, function_layers
from layer_requirements import read_pins

BUILD = REPO / ".aws-sam" / "build"
LAYERS = {
    "CoreLayer": "core",
    "EmbedLayer": "embed",
    "OpenAiLayer": "openai",
    "MongoLayer": "mongo",
    "McpLayer": "mcp",
    "QdrantLayer": "qdrant",
}
EMBEDDING_BUDGET_MIB, LIGHT_BUDGET_MIB = 225, 155
#: McpFunction's: the light budget plus 20 MiB for McpLayer, the MCP SDK, whose server imports
#: cryptography (its sealed request state; an 11 MiB shared object) and uvicorn at import.
MCP_BUDGET_MIB = LIGHT_BUDGET_MIB + 20

pytestmark = pytest.mark.skipif(
    not all((BUILD / name / "python").is_dir() for name in LAYERS),
    reason="no built layers: run `make validate` (sam build)",
)

# What each library computes (the Edge engine: a dense and a sparse query on a new shard),
# printed as JSON (run by the built layer's python3.12 and by the
# test environment's interpreter with its own, unstripped, wheels).
RESULTS = r"""
import json, numpy as np, igraph, rapidfuzz, yaml, Stemmer
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein
rng = np.random.default_rng(7)
a = rng.standard_normal((64, 32))
edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (6, 7), (7, 2)]
g = igraph.Graph(n=8, edges=edges, directed=True)
import qdrant_edge as qe, tempfile
shard = qe.EdgeShard.create(tempfile.mkdtemp() + "/s", qe.EdgeConfig(
    vectors={"v": qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine)},
    sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    wal_enabled=True))
for i, v in enumerate([[1, 0, 0, 0], [0.9, 0.1, 0, 0], [0, 1, 0, 0]]):
    shard.update(qe.UpdateOperation.upsert_points([qe.Point(
        i + 1, {"v": v, "bm25": qe.SparseVector([i, 7], [1.0, 0.5])}, {"n": i})]))
hits = shard.query(qe.QueryRequest(limit=3, query=qe.Query.Nearest([1.0, 0, 0, 0], using="v"),
                                   with_payload=True))
sparse = shard.query(qe.QueryRequest(
    limit=3, query=qe.Query.Nearest(qe.SparseVector([7], [1.0]), using="bm25")))
edge = [[int(h.id), round(float(h.score), 6)] for h in [*hits, *sparse]]
shard.close()
print(json.dumps({
    "edge": edge,
    "numpy": [float(x) for x in (a @ a.T).sum(axis=1)[:8]] + [float(np.linalg.norm(a))],
    "pagerank": g.pagerank(damping=0.85),
    "rapidfuzz": [fuzz.ratio("visual studio code", "vs code"),
                  fuzz.token_set_ratio("free code editor", "code editor free open source"),
                  Levenshtein.distance("cursor", "curser"),
                  process.extractOne("zed editor", ["vim", "zed", "emacs"])[1]],
    "yaml": yaml.load("a: [1, 2.5, x]\nb: {c: true}", Loader=yaml.CSafeLoader),
    "stemmer": Stemmer.Stemmer("english").stemWords(["running", "searches", "embeddings"]),
}))
"""


def python312() -> str:
    done = subprocess.run(
        ["bash", str(SCRIPTS / "find_python.sh"), "3.12"], capture_output=True, text=True
    )
    if done.returncode:
        pytest.skip("no python3.12 on PATH or in pyenv")
    return done.stdout.strip()


def run(exe: str, path: list[Path] | None, tmp_path: Path) -> dict:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",  # the build stays as sam build left it
        "HOME": str(tmp_path),
    }
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
    done = subprocess.run(
        [exe, "-I" if path is None else "-s", "-c", RESULTS],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def installed(layer: str) -> dict[str, str]:
    """Distribution name (as pip writes it, lower-case, '-') -> version, from the dist-info."""
    out = {}
    for info in (BUILD / layer / "python").glob("*.dist-info"):
        meta = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
        fields = dict(line.split(": ", 1) for line in meta.splitlines()[:20] if ": " in line)
        out[fields["Name"].lower().replace("_", "-").replace(".", "-")] = fields["Version"]
    return out


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_each_built_layer_is_its_lock_file(layer):
    lock = (REPO / "layers" / LAYERS[layer] / "requirements.txt").read_text(encoding="utf-8")
    assert installed(layer) == read_pins(lock)


def test_the_stripped_core_layer_computes_what_the_wheels_compute(tmp_path):
    core = BUILD / "CoreLayer" / "python"
    unstripped = [
        p
        for p in core.rglob("*.so*")
        if ".symtab"
        in subprocess.run(["readelf", "-S", "-W", str(p)], capture_output=True, text=True).stdout
    ]
    assert unstripped == []
    built = run(python312(), [core], tmp_path)
    wheels = run(sys.executable, None, tmp_path)
    assert built.keys() == wheels.keys()
    for key in ("numpy", "pagerank"):
        assert all(
            math.isclose(x, y, rel_tol=1e-9) for x, y in zip(built[key], wheels[key], strict=True)
        ), key
        assert len(built[key]) == len(wheels[key])
    for key in ("rapidfuzz", "yaml", "stemmer", "edge"):
        assert built[key] == wheels[key], key
    assert [i for i, _ in built["edge"][:3]] == [1, 2, 3]  # the Edge engine loads and ranks


def test_the_embed_layer_leaves_out_onnxruntimes_c_api_library():
    capi = BUILD / "EmbedLayer" / "python" / "onnxruntime" / "capi"
    assert list(capi.glob("onnxruntime_pybind11_state*.so"))
    assert list(capi.glob("libonnxruntime.so*")) == []


@pytest.mark.parametrize("engine", ["edge-s3", "qdrant"])
def test_every_function_with_its_layers_is_within_its_budget(engine):
    template = yaml.load((REPO / "template.yaml").read_text(encoding="utf-8"), Loader=_CfnLoader)
    over = {}
    layers_of = function_layers(template, engine)
    assert all(("QdrantLayer" in x) == (engine == "qdrant") for x in layers_of.values())
    for name, layers in layers_of.items():
        total = sum(folder_bytes(BUILD / x) for x in [name, *layers]) / MB
        budget = EMBEDDING_BUDGET_MIB if "EmbedLayer" in layers else LIGHT_BUDGET_MIB
        if "McpLayer" in layers:
            budget = MCP_BUDGET_MIB
        if total > budget:
            over[name] = f"{total:.1f} MiB > {budget} MiB"
    assert over == {}


QDRANT_CLIENT = r"""
import json, sys
from qdrant_client import QdrantClient, models
import agentic_search.adapters.qdrant.store  # QdrantStore's module imports over the layers
client = QdrantClient(url="http://127.0.0.1:9", prefer_grpc=True, timeout=1)
match = models.FieldCondition(key="k", match=models.MatchValue(value="v"))
print(json.dumps({
    "qdrant_client": sys.modules["qdrant_client"].__file__,
    "grpc": sys.modules["grpc"].__file__,
    "filter": models.Filter(must=[match]).model_dump(exclude_none=True),
}))
"""


def test_the_qdrant_client_is_in_the_qdrant_layer_only(tmp_path):
    core = BUILD / "CoreLayer" / "python"
    for name in ("qdrant_client", "grpc", "google", "httpx", "h2"):
        assert not (core / name).exists(), name  # an edge-s3 function ships none of them
    assert (core / "qdrant_edge").is_dir()
    layers = [core, BUILD / "QdrantLayer" / "python"]
    done = subprocess.run(
        [python312(), "-s", "-c", QDRANT_CLIENT],
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(map(str, layers)),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(tmp_path),
        },
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["qdrant_client"].startswith(str(BUILD / "QdrantLayer"))
    assert out["grpc"].startswith(str(BUILD / "QdrantLayer"))
    assert out["filter"]["must"][0]["key"] == "k"


ADAPTERS = r"""
import json, sys
from openai import OpenAI
from pymongo import MongoClient
client = OpenAI(api_key="test", base_url="http://127.0.0.1:9/v1")
mongo = MongoClient("mongodb://127.0.0.1:9", connect=False, serverSelectionTimeoutMS=10)
print(json.dumps({
    "openai": sys.modules["openai"].__file__,
    "pymongo": sys.modules["pymongo"].__file__,
    "base_url": str(client.base_url),
}))
"""


def test_the_openai_and_mongo_layers_load_their_sdks_over_the_core_layer(tmp_path):
    layers = [BUILD / name / "python" for name in ("CoreLayer", "OpenAiLayer", "MongoLayer")]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(map(str, layers)),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = subprocess.run(
        [python312(), "-s", "-c", ADAPTERS],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(tmp_path)},
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["openai"].startswith(str(BUILD / "OpenAiLayer"))
    assert out["pymongo"].startswith(str(BUILD / "MongoLayer"))
    assert out["base_url"] == "http://127.0.0.1:9/v1/"
    # neither SDK is in the core layer any more
    assert not (BUILD / "CoreLayer" / "python" / "openai").exists()
    assert not (BUILD / "CoreLayer" / "python" / "pymongo").exists()


MCP_EXCHANGE = r"""
import json, sys
from agentic_search_lambda.mcp_http import handler
class Context:
    function_name, function_version, memory_limit_in_mb = "McpFunction", "$LATEST", 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:McpFunction"
    aws_request_id = "built"
event = json.load(open(sys.argv[1]))
out = handler(event, Context())
result = json.loads(out["body"])["result"]
print(json.dumps({
    "status": out["statusCode"],
    "tools": [t["name"] for t in result["tools"]],
    "mcp": sys.modules["mcp"].__file__,
}))
"""


def test_the_mcp_layer_answers_tools_list_over_the_core_layer(tmp_path):
    layers = [BUILD / name / "python" for name in ("CoreLayer", "McpLayer")]
    done = subprocess.run(
        [python312(), "-s", "-c", MCP_EXCHANGE, str(REPO / "events/mcp_api/post_tools_list.json")],
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ.get("PATH", ""),
            **_cold_import_env(),  # a Lambda container's environment
            "PYTHONPATH": os.pathsep.join(map(str, [BUILD / "McpFunction", *layers])),
            "LAMBDA_TASK_ROOT": str(BUILD / "McpFunction"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "AGENTIC_SEARCH_HOME": str(tmp_path),
            "HOME": str(tmp_path),
        },
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] == 200
    assert out["tools"] == ["search", "explain", "get_record", "compare", "list_domains"]
    assert out["mcp"].startswith(str(BUILD / "McpLayer"))
    assert not (BUILD / "CoreLayer" / "python" / "mcp").exists()  # the SDK is its layer's only


PRECOMPILED = r"""
import importlib.util, json, os, sys
import app
layers = sys.argv[1:]
missing = sorted(
    name
    for name, module in list(sys.modules.items())
    if (path := getattr(module, "__file__", None))
    and path.endswith(".py")
    and path.startswith(tuple(layers))
    and not os.path.exists(importlib.util.cache_from_source(path))
)
print(json.dumps({"missing": missing, "modules": len(sys.modules)}))
"""


def _cold_import_env() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location(
        "cold_import", REPO / "benchmarks" / "cold_import" / "cold_import.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LAMBDA_ENV)


@pytest.mark.parametrize("engine", ["edge-s3", "qdrant"])
def test_every_module_a_cold_start_imports_from_a_layer_is_precompiled(tmp_path, engine):
    template = yaml.load((REPO / "template.yaml").read_text(encoding="utf-8"), Loader=_CfnLoader)
    base = {"PATH": os.environ.get("PATH", ""), **_cold_import_env()}
    exe = python312()
    for name, layers in sorted(function_layers(template, engine).items()):
        paths = [BUILD / x / "python" for x in layers]
        done = subprocess.run(
            [exe, "-s", "-c", PRECOMPILED, *map(str, paths)],
            capture_output=True,
            text=True,
            env={
                **base,
                "PYTHONPATH": os.pathsep.join(map(str, [BUILD / name, *paths])),
                "LAMBDA_TASK_ROOT": str(BUILD / name),
                "AGENTIC_SEARCH_HOME": str(tmp_path),
            },
            cwd=tmp_path,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, (name, done.stderr[-3000:])
        out = json.loads(done.stdout)
        assert out["modules"] > 100, name  # the import really ran
        assert out["missing"] == [], name
