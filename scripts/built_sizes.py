"""Unzipped size of each built function with its layers, against Lambda's 250 MiB limit.

Reads the template (for each ``AWS::Serverless::Function`` the Globals' ``Layers`` then its own;
a layer chosen by ``Fn::If`` on the vector engine's conditions, ``UseQdrant`` / ``UseEdgeS3``, is
counted for the ``--vector-engine`` given) and sizes the folders ``sam build`` wrote under the
build directory (one per logical id).

Usage:
    python scripts/built_sizes.py [--template template.yaml] [--build-dir DIR] [--markdown]
        [--vector-engine edge-s3|qdrant]

Prints one row per layer and per function (MiB = 2**20 bytes; ``--markdown``: the table of
docs/benchmarks.md) and exits 1 when a function plus its layers is over 250 MiB unzipped
(262,144,000 bytes), 2 when a built folder is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import yaml

LIMIT_BYTES = 250 * 1024 * 1024
MB = 1024 * 1024


class _CfnLoader(yaml.SafeLoader):
    """YAML loader that keeps CloudFormation's short tags (``!Ref X`` -> ``{"Ref": "X"}``)."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        return {name: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {name: loader.construct_sequence(node, deep=True)}
    return {name: loader.construct_mapping(node, deep=True)}


_CfnLoader.add_multi_constructor("!", _tag)


def folder_bytes(path: Path) -> int:
    """Sum of the sizes of the regular files under ``path`` (links not followed)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            st = os.lstat(os.path.join(root, name))
            total += st.st_size
    return total


VECTOR_ENGINES = ("edge-s3", "qdrant")


def engine_conditions(vector_engine: str) -> dict[str, bool]:
    """The template's conditions that depend on ``VectorEngine`` alone, for that engine."""
    if vector_engine not in VECTOR_ENGINES:
        raise ValueError(f"vector engine {vector_engine!r}: expected one of {VECTOR_ENGINES}")
    return {"UseQdrant": vector_engine == "qdrant", "UseEdgeS3": vector_engine != "qdrant"}


def _layer_ref(node: Any, conditions: dict[str, bool]) -> str | None:
    """A ``Layers`` entry's logical id: ``Ref``, or the branch of an ``Fn::If`` on one of
    ``conditions`` (None for ``AWS::NoValue``).

    Raises:
        ValueError: for an ``Fn::If`` on another condition.
    """
    if isinstance(node, dict) and "Fn::If" in node:
        name, when_true, when_false = node["Fn::If"]
        if name not in conditions:
            raise ValueError(f"a layer chosen by condition {name!r}: only {sorted(conditions)}")
        return _layer_ref(when_true if conditions[name] else when_false, conditions)
    if isinstance(node, dict) and "Ref" in node and node["Ref"] != "AWS::NoValue":
        return str(node["Ref"])
    return None


def function_layers(
    template: dict[str, Any], vector_engine: str = "edge-s3"
) -> dict[str, list[str]]:
    """Function logical id -> the logical ids of its layers (Globals' first, then its own) in a
    stack of ``vector_engine`` (the template's default: ``edge-s3``).

    Raises:
        ValueError: for an unknown engine, or a layer chosen by another condition.
    """
    conditions = engine_conditions(vector_engine)
    glob = template.get("Globals", {}).get("Function", {}).get("Layers", [])
    out = {}
    for name, res in template.get("Resources", {}).items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        refs = list(glob) + list(res.get("Properties", {}).get("Layers", []))
        out[name] = [x for r in refs if (x := _layer_ref(r, conditions)) is not None]
    return out


def _total(name: str, layers_of: dict[str, list[str]], sizes: dict[str, int]) -> int:
    return sizes[name] + sum(sizes[x] for x in layers_of[name])


def markdown(layers_of: dict[str, list[str]], sizes: dict[str, int]) -> str:
    """The sizes as a markdown table: one row per set of layers, the functions that have it."""
    rows: dict[tuple[str, ...], list[str]] = {}
    for name in sorted(layers_of):
        rows.setdefault(tuple(layers_of[name]), []).append(name.removesuffix("Function"))
    lines = ["| layers | functions | MiB unzipped, with the layers |", "|---|---|---|"]
    for layers, names in sorted(
        rows.items(), key=lambda kv: _total(f"{kv[1][0]}Function", layers_of, sizes)
    ):
        total = max(_total(f"{n}Function", layers_of, sizes) for n in names)
        parts = " + ".join(f"{x} {sizes[x] / MB:.1f}" for x in layers)
        lines.append(f"| {parts} | {', '.join(names)} | {total / MB:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the sizes; the exit status says whether every function fits (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", default="template.yaml")
    parser.add_argument("--build-dir", default=".aws-sam/build")
    parser.add_argument("--markdown", action="store_true", help="a markdown table of the sizes")
    parser.add_argument(
        "--vector-engine",
        choices=VECTOR_ENGINES,
        default="edge-s3",
        help="the stack's VectorEngine: which conditional layers count (default: edge-s3)",
    )
    args = parser.parse_args(argv)
    template = yaml.load(Path(args.template).read_text(encoding="utf-8"), Loader=_CfnLoader)
    build = Path(args.build_dir)
    layers_of = function_layers(template, args.vector_engine)
    sizes: dict[str, int] = {}
    for name in sorted({x for ls in layers_of.values() for x in ls} | set(layers_of)):
        if not (build / name).is_dir():
            print(f"no built folder {build / name}", file=sys.stderr)
            return 2
        sizes[name] = folder_bytes(build / name)
    layer_names = sorted({x for ls in layers_of.values() for x in ls})
    if args.markdown:
        print(markdown(layers_of, sizes))
        return 1 if any(_total(n, layers_of, sizes) > LIMIT_BYTES for n in layers_of) else 0
    print(f"{'artifact':<28} {'MiB':>8}  (unzipped)")
    for name in layer_names:
        print(f"{name:<28} {sizes[name] / MB:>8.1f}")
    over = []
    for name in sorted(layers_of):
        total = _total(name, layers_of, sizes)
        with_layers = " + ".join(layers_of[name]) or "no layer"
        print(f"{name:<28} {sizes[name] / MB:>8.3f}  with {with_layers}: {total / MB:.1f}")
        if total > LIMIT_BYTES:
            over.append(name)
    for name in over:
        print(f"{name}: over Lambda's 250 MiB unzipped limit", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
