"""The caller's access rule compiled by every engine and RUN there: MongoDB (mongomock),
Qdrant local mode (in memory) and Qdrant Edge; each admits exactly the records the rule
written out independently (tests/support/access.py ``readable``) admits, for callers with
and without principals, the administrator, and a restricted class with and without its
claim, under both defaults."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mongomock
import pytest
from qdrant_client import QdrantClient
from support.access import access_yaml, readable, tools_records, with_access

from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.adapters.mongo import to_mongo
from agentic_search.adapters.qdrant.filters import to_qdrant
from agentic_search.adapters.qdrant.local import LocalQdrantStore
from agentic_search.config import Settings
from agentic_search.logic.access import AccessPolicy
from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.wire import Caller, Filter, PointWrite

CALLERS = [[], ["a"], ["b"], ["a", "b"], ["a", "clearance"], ["admin"], ["nobody"]]


def _catalog() -> list[dict[str, Any]]:
    records = tools_records()[:60]
    acls: dict[str, list[str] | None] = {}
    for i, rec in enumerate(records):  # every shape of list: none, empty, one, two
        acls[rec["id"]] = [None, [], ["a"], ["b"], ["a", "b"], ["c"]][i % 6]
    restricted = {r["id"]: "restricted" for r in records[::7]}
    return with_access(records, acls, restricted)


CATALOG = _catalog()


@pytest.fixture(scope="module", params=["deny", "public"])
def schema(request, tmp_path_factory) -> DomainSchema:
    path = tmp_path_factory.mktemp(request.param) / "acl.yaml"
    return load_schema(access_yaml(path, request.param))


@pytest.fixture(scope="module")
def engines(schema: DomainSchema, tmp_path_factory) -> Iterator[dict[str, Any]]:
    """The catalog in mongomock, Qdrant local mode and Qdrant Edge (a tiny vector each)."""
    client = mongomock.MongoClient()
    db = client["acl"]
    db["acltools"].insert_many([dict(r) for r in CATALOG])
    points = [
        PointWrite(r["id"], {a: [1.0, 0.0] for a in schema.aspect_names}, dict(r)) for r in CATALOG
    ]
    local = LocalQdrantStore(Settings(qdrant_url=None), client=QdrantClient(":memory:"))
    local.ensure_collection(schema, dim=2)
    local.upsert(schema, points)
    edge = EdgeStore(Settings(), root=Path(tmp_path_factory.mktemp("edge")))
    edge.ensure_collection(schema, dim=2)
    edge.upsert(schema, points)
    yield {"mongo": db["acltools"], "local": local, "edge": edge}
    local.close()
    edge.close()
    client.close()


@pytest.mark.parametrize("principals", CALLERS, ids=lambda p: "+".join(p) or "anonymous")
def test_every_engine_admits_what_the_rule_admits(schema, engines, principals):
    default = schema.access.default  # type: ignore[union-attr]
    want = {r["id"] for r in readable(CATALOG, principals, default)}
    policy = AccessPolicy.of(schema, Caller.of(principals))
    assert {r["id"] for r in CATALOG if policy.admits(r)} == want
    rule = policy.hard_filter()
    filters = [rule] if rule is not None else []
    mongo = {d["id"] for d in engines["mongo"].find(to_mongo(schema, filters), {"id": True})}
    assert mongo == want
    local = engines["local"]
    points, _ = local.client.scroll(
        local.collection(schema), scroll_filter=to_qdrant(schema, filters), limit=1000
    )
    assert {p.payload["id"] for p in points} == want
    edge = engines["edge"]
    flt = edge.compile_filter(schema, filters)
    assert {p["id"] for p in edge.scroll(schema, ["id"], flt=flt)} == want
    # with a user's filter besides: both hold (the rule is one more hard filter)
    free = Filter(field="open_source", operator="eq", value=True)
    both = {
        p["id"]
        for p in edge.scroll(schema, ["id"], flt=edge.compile_filter(schema, [free, *filters]))
    }
    assert both == {r["id"] for r in CATALOG if r["id"] in want and r.get("open_source") is True}
