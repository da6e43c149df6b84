"""An access-controlled copy of the tools domain for the access-control tests: the bundled
tools schema renamed ``acltools`` with an ``acl`` list field (the access field), a
``sensitivity`` field (a restricted class: ``restricted`` needs the ``clearance`` claim) and
``admin`` as the administrator; records are the bundled catalog's with access lists set by
the test."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

TOOLS_YAML = Path(str(resources.files("agentic_search") / "domains" / "tools.yaml"))
TOOLS_JSONL = Path(str(resources.files("agentic_search") / "data" / "tools.jsonl"))
GOLDEN = Path(str(resources.files("agentic_search_cli") / "data" / "tools_golden.jsonl"))
TOOLS_QUERIES = Path(__file__).resolve().parents[2] / "benchmarks" / "tools_queries"

ACCESS_BLOCK = """
access:
  field: acl
  default: {default}
  admin: admin
  restricted:
    - {{field: sensitivity, values: [restricted], claim: clearance}}
"""


def access_yaml(path: Path, default: str = "deny", name: str = "acltools") -> Path:
    """Write the access-controlled tools schema to ``path`` (``default``: deny or public);
    ``name`` is the domain's (another name is another collection)."""
    text = TOOLS_YAML.read_text(encoding="utf-8")
    text = re.sub(r"^name: tools$", f"name: {name}", text, count=1, flags=re.M)
    text = text.replace(
        "fields:\n  id:", "fields:\n  acl: {type: list}\n  sensitivity: {type: string}\n  id:", 1
    )
    assert "acl: {type: list}" in text
    path.write_text(text + ACCESS_BLOCK.format(default=default), encoding="utf-8")
    return path


def tools_records() -> list[dict[str, Any]]:
    """The bundled tools catalog's records, in file order."""
    lines = TOOLS_JSONL.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def with_access(
    records: Iterable[Mapping[str, Any]],
    acls: Mapping[str, list[str] | None],
    sensitivity: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``records`` with their ``acl`` (None: no list) and ``sensitivity`` set by id."""
    out = []
    for rec in records:
        row = dict(rec)
        acl = acls.get(row["id"])
        if acl is not None:
            row["acl"] = list(acl)
        if sensitivity and row["id"] in sensitivity:
            row["sensitivity"] = sensitivity[row["id"]]
        out.append(row)
    return out


def readable(
    records: Iterable[Mapping[str, Any]],
    principals: Iterable[str],
    default: str = "deny",
    claims: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The records a caller holding ``principals`` may read (the rule of
    docs/guides/access-control.md, written out independently of the code under test)."""
    held = set(principals) | set(claims)
    if "admin" in held:
        return [dict(r) for r in records]
    out = []
    for rec in records:
        acl = rec.get("acl") or []
        ok = bool(set(acl) & held) if acl else default == "public"
        if rec.get("sensitivity") == "restricted" and "clearance" not in held:
            ok = False
        if ok:
            out.append(dict(rec))
    return out


def golden_queries() -> list[str]:
    """The golden set's query texts."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


def tools_queries() -> list[str]:
    """The tools_queries benchmark's query texts (tuning and held-out)."""
    lines = (TOOLS_QUERIES / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


#: Response keys that echo the query or time the search: not evidence of what was read.
ECHO_KEYS = frozenset(
    {
        "query",
        "normalizedQuery",
        "surface",
        "origin",
        "cache",
        "planCache",
        "stageMs",
        "sourceMs",
        "latencyMs",
        "totalMs",
        "timings",
        "executionStats",
    }
)


def strip_echo(value: Any) -> Any:
    """``value`` (a response's wire dict) without the keys of :data:`ECHO_KEYS`."""
    if isinstance(value, dict):
        return {k: strip_echo(v) for k, v in value.items() if k not in ECHO_KEYS}
    if isinstance(value, list):
        return [strip_echo(v) for v in value]
    return value
