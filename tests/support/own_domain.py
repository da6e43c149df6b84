"""A user's own domain, as a new user writes one: a minimal YAML (no entities, no
vocabularies, ``version: 1`` as a YAML number, an ``integer`` release year declared as the
time field) over 24 npm packages (name and summary as the registry lists them), with judged
queries in the BEIR layout (a tuning and a held-out split, unanswerable queries marked)."""

from __future__ import annotations

import json
from pathlib import Path

YAML = """\
name: pkgs
version: 1
title_field: name
text_field: summary
fields:
  id: {type: string, required: true}
  name: {type: string, required: true}
  summary: {type: string}
  downloads: {type: integer}
  released: {type: integer, filter: [gte, lt, lte, gt]}
aspects:
  - name: about
    fields: [name, summary]
keyword_fields: [name, summary]
structured_sort: {field: downloads, order: desc}
temporal: {field: released}
"""

#: id -> (summary, release year)
PACKAGES = {
    "semver": ("The semantic version parser used by npm.", 2020),
    "debug": ("Lightweight debugging utility for Node.js and the browser", 2021),
    "minimatch": ("a glob matcher in javascript", 2022),
    "chalk": ("Terminal string styling done right", 2023),
    "supports-color": ("Detect whether a terminal supports color", 2024),
    "ms": ("Tiny millisecond conversion utility", 2025),
    "commander": ("the complete solution for node.js command-line programs", 2020),
    "ajv": ("Another JSON Schema Validator", 2021),
    "uuid": ("RFC9562 UUIDs", 2022),
    "js-yaml": ("YAML 1.2 parser and serializer", 2019),
    "ws": ("Simple to use, blazing fast websocket client and server for Node.js", 2023),
    "acorn": ("ECMAScript parser", 2024),
    "postcss": ("Tool for transforming styles with JS plugins", 2025),
    "typescript": ("TypeScript is a language for application scale JavaScript", 2026),
    "rimraf": ("A deep deletion module for node (like rm -rf)", 2020),
    "qs": ("A querystring parser that supports nesting and arrays", 2021),
    "picocolors": ("The tiniest and the fastest library for terminal output with colors", 2025),
    "esbuild": ("An extremely fast JavaScript and CSS bundler and minifier.", 2026),
    "yaml": ("JavaScript parser and stringifier for YAML", 2024),
    "lodash": ("Lodash modular utilities.", 2018),
    "mkdirp": ("Recursively mkdir, like mkdir -p", 2019),
    "mime": ("A comprehensive library for mime-type mapping", 2022),
    "dotenv": ("Loads environment variables from .env file", 2023),
    "axios": ("Promise based HTTP client for the browser and node.js", 2024),
}

#: id -> (text, split, relevant ids); no relevant id: unanswerable (the catalog has nothing)
QUERIES = {
    "t1": ("colored terminal output", "tuning", ["chalk", "picocolors", "supports-color"]),
    "t2": ("parse yaml files", "tuning", ["js-yaml", "yaml"]),
    "t3": ("http requests from the browser", "tuning", ["axios"]),
    "t4": ("validate json against a schema", "tuning", ["ajv"]),
    "t5": ("delete a folder recursively", "tuning", ["rimraf"]),
    "t6": ("bake sourdough bread at home", "tuning", []),
    "t7": ("knit a wool scarf", "tuning", []),
    "h1": ("bundle javascript and css fast", "heldout", ["esbuild"]),
    "h2": ("read settings from a .env file", "heldout", ["dotenv"]),
    "h3": ("command line argument parsing", "heldout", ["commander"]),
    "h4": ("websocket server", "heldout", ["ws"]),
    "h5": ("repair a bicycle chain", "heldout", []),
}


def records() -> list[dict]:
    """The catalog's records, most downloaded first (downloads are made up, decreasing)."""
    return [
        {"id": rid, "name": rid, "summary": summary, "downloads": 1000 - i, "released": year}
        for i, (rid, (summary, year)) in enumerate(PACKAGES.items())
    ]


def write(folder: Path) -> tuple[Path, Path, Path]:
    """Write ``pkgs.yaml``, ``pkgs.jsonl`` and the judged queries (``queries/``) into
    ``folder``; returns the three paths."""
    folder.mkdir(parents=True, exist_ok=True)
    yaml_path = folder / "pkgs.yaml"
    yaml_path.write_text(YAML)
    catalog = folder / "pkgs.jsonl"
    catalog.write_text("".join(json.dumps(r) + "\n" for r in records()))
    queries = folder / "queries"
    (queries / "qrels").mkdir(parents=True, exist_ok=True)
    lines, qrels = [], {"tuning": [], "heldout": []}
    for qid, (text, split, relevant) in QUERIES.items():
        row = {"_id": qid, "text": text}
        if not relevant:
            row.update(answerable=False, split=split)
        lines.append(json.dumps(row))
        qrels[split] += [f"{qid}\t{rid}\t1" for rid in relevant]
    (queries / "queries.jsonl").write_text("\n".join(lines) + "\n")
    for split, rows in qrels.items():
        body = "\n".join(["query-id\tcorpus-id\tscore", *rows]) + "\n"
        (queries / "qrels" / f"{split}.tsv").write_text(body)
    return yaml_path, catalog, queries
