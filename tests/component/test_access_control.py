"""Per-record access control end to end over real Qdrant Edge and MiniLM (no mocks): an
access-controlled copy of the tools domain (tests/support/access.py).

The property test draws random access lists, restricted records, callers and queries (the
golden and tools_queries texts, and names, comparisons, typos, alternatives and bridges made
from the catalog's own records) and checks that no response element names or quotes a record
the caller cannot read, and that the caller's answer is the answer of a catalog holding only
the records it can read (ranking included whenever the query's BM25 list, the one source
with corpus-wide statistics, is the same in both). The other tests pin the restricted-class
refusal, the public default, and cache isolation between two callers.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from support.access import (
    access_yaml,
    golden_queries,
    readable,
    strip_echo,
    tools_queries,
    tools_records,
    with_access,
)
from support.homes import copy_home
from support.llm_answers import chat_completion, intent_answer, plan_answer

from agentic_search.config import Settings
from agentic_search.pipeline.access import caller_view
from agentic_search.service import SearchService
from agentic_search.sync.prune import prune_records
from agentic_search.wire import Caller

#: A slice of the bundled catalog (code tools: names that link, compare and bridge).
RECORDS = tools_records()[:32]
IDS = [r["id"] for r in RECORDS]
PRINCIPALS = ["a", "b", "c"]
ADMIN = Caller.of(["admin"])


def _service(home: Path, yaml: Path, embedder: Any, cache: str = "none") -> SearchService:
    settings = Settings(agentic_search_home=home, cache_backend=cache)
    return SearchService.create(settings, str(yaml), embedder=embedder)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, embedder) -> tuple[Path, Path]:
    """(a folder holding the slice indexed, every record readable by ``a``; the schema)."""
    root = tmp_path_factory.mktemp("acl")
    yaml = access_yaml(root / "acl.yaml", "deny")
    service = _service(root / "full", yaml, embedder)
    try:
        service.ingest_records(with_access(RECORDS, {i: ["a"] for i in IDS}))
    finally:
        service.close()
    return root / "full", yaml


def _names(rec: dict[str, Any]) -> list[str]:
    return [rec["id"], rec["name"], *(rec.get("aliases") or [])]


def _mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole word (case-insensitive)."""
    return re.search(rf"(?<![\w-]){re.escape(name.casefold())}(?![\w-])", text) is not None


def _typo(name: str) -> str:
    return name[:-2] + name[-1] + name[-2] if len(name) > 4 else name + name[-1]


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    acls = {
        rid: draw(st.one_of(st.none(), st.lists(st.sampled_from(PRINCIPALS), max_size=2)))
        for rid in IDS
    }
    restricted = draw(st.sets(st.sampled_from(IDS), max_size=3))
    principals = draw(st.lists(st.sampled_from([*PRINCIPALS, "clearance"]), max_size=3))
    names = [r["name"] for r in RECORDS]
    one, two = draw(st.sampled_from(names)), draw(st.sampled_from(names))
    query = draw(
        st.one_of(
            st.sampled_from(golden_queries() + tools_queries()),
            st.sampled_from(
                [
                    one,
                    f"{one} vs {two}",
                    f"compare {one} and {two}",
                    f"alternatives to {one}",
                    _typo(one),
                    f"what does {one} integrate with",
                    f"is {one} open source like {two}",
                ]
            ),
        )
    )
    return {"acls": acls, "restricted": restricted, "principals": principals, "query": query}


@pytest.fixture()
def work(pristine, embedder) -> Iterator[Any]:
    """A function making, per example, the caller's index and the reference index."""
    full, yaml = pristine
    made: list[SearchService] = []
    folders: list[Path] = []

    def make(scenario: dict[str, Any]) -> tuple[SearchService, SearchService, list[dict]]:
        tmp = Path(tempfile.mkdtemp(prefix="acl-"))
        folders.append(tmp)
        catalog = with_access(
            RECORDS, scenario["acls"], dict.fromkeys(scenario["restricted"], "restricted")
        )
        mine = readable(catalog, scenario["principals"], "deny")
        view = _service(copy_home(full, tmp / "view"), yaml, embedder)
        view.ingest_records(catalog)  # payloads only: the vectors stay
        ref = _service(copy_home(full, tmp / "ref"), yaml, embedder)
        keep = {r["id"] for r in mine}
        prune_records(ref.deps, [i for i in IDS if i not in keep], None)
        made.extend([view, ref])
        return view, ref, catalog

    yield make
    for service in made:
        service.close()
    for folder in folders:  # each example's two homes: copies of the whole index
        shutil.rmtree(folder, ignore_errors=True)


def _record_ids(response: dict[str, Any]) -> set[str]:
    """Every record id a response names structurally."""
    out = {c["id"] for c in response["candidates"]}
    pack = response.get("evidencePack") or {}
    out |= {e.get("docId") or e.get("id") for e in pack.get("evidence") or []}
    for link in response["intent"].get("entities") or []:
        if link.get("kind", "entity") == "entity":
            out.add(link["id"])
    ref = response["intent"].get("referenceTool")
    if ref:
        out.add(ref)
    out |= set(response["intent"].get("excludedTools") or [])
    for row in (response.get("comparison") or {}).get("records") or []:
        out.add(row.get("id"))
    return {i for i in out if i}


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure is shown, not shrunk
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=scenarios())
def test_no_answer_names_a_record_the_caller_cannot_read(work, scenario):
    view, ref, catalog = work(scenario)
    caller = Caller.of(scenario["principals"])
    query = scenario["query"]
    mine = {r["id"] for r in readable(catalog, scenario["principals"], "deny")}
    got = view.search(query, caller=caller).wire()
    want = ref.search(query, caller=ADMIN).wire()

    # (1) structurally: every record the answer names is readable
    assert _record_ids(got) <= mine
    # (2) textually: no name of an unreadable record that neither the query nor a readable
    # record's own text contains appears anywhere in the answer (explain text, snippets,
    # suggestions, the comparison table, errors)
    # words the answer may hold for other reasons: the readable records' text, and the
    # reference answer (made without the unreadable records: the pipeline's own prose)
    readable_text = json.dumps([r for r in catalog if r["id"] in mine]).casefold()
    readable_text += json.dumps(strip_echo(want), ensure_ascii=False).casefold()
    text = json.dumps(strip_echo(got), ensure_ascii=False).casefold()
    for rec in catalog:
        if rec["id"] in mine:
            continue
        for name in _names(rec):
            if _mentions(query.casefold(), name) or _mentions(readable_text, name):
                continue
            assert not _mentions(text, name), (name, query)
    # (3) the answer of the catalog of readable records only: the same links, comparison
    # and, when the one corpus-statistics source (BM25) ranks alike, the same ranking
    assert _links(got) == _links(want)
    assert (got.get("comparison") or {}).get("records") == (want.get("comparison") or {}).get(
        "records"
    )
    if _bm25(view, caller, query) == _bm25(ref, ADMIN, query):
        event("ranking compared")
        assert [c["id"] for c in got["candidates"]] == [c["id"] for c in want["candidates"]]
    else:  # the documented exception: BM25's IDF is the whole collection's
        event("BM25 ranks differ (corpus statistics)")
        assert {c["id"] for c in got["candidates"]} <= mine


def _links(response: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["id"], e.get("kind", "entity")) for e in response["intent"].get("entities") or []]


def _bm25(service: SearchService, caller: Caller, query: str) -> list[str]:
    deps = caller_view(service.deps, caller)
    return [h.id for h in deps.keyword.search(service.schema, query, 100)]


def test_a_restricted_class_is_refused_the_same_whether_or_not_such_records_exist(work):
    acls = {i: ["a"] for i in IDS}
    caller = Caller.of(["a"])
    with_them, _, _ = work({"acls": acls, "restricted": set(IDS[:3]), "principals": ["a"]})
    without, _, _ = work({"acls": acls, "restricted": set(), "principals": ["a"]})
    query = "restricted code editors"
    a = with_them.search(query, caller=caller).wire()
    b = without.search(query, caller=caller).wire()
    assert a["notPermitted"] == b["notPermitted"]
    assert "not permitted" in a["notPermitted"][0] and "clearance" in a["notPermitted"][0]
    assert not {c["id"] for c in a["candidates"]} & set(IDS[:3])
    cleared = with_them.search(query, caller=Caller.of(["a", "clearance"])).wire()
    assert "notPermitted" not in cleared


def test_no_principals_read_only_public_records(tmp_path, embedder):
    yaml = access_yaml(tmp_path / "pub.yaml", "public", name="pubtools")
    service = _service(tmp_path / "home", yaml, embedder)
    try:
        few = RECORDS[:6]
        service.ingest_records(with_access(few, {few[0]["id"]: ["a"], few[1]["id"]: ["b"]}))
        public = {r["id"] for r in few[2:]}
        anonymous = service.search("code editor", caller=Caller()).wire()
        assert {c["id"] for c in anonymous["candidates"]} == public
        as_a = service.search("code editor", caller=Caller.of(["a"])).wire()
        assert {c["id"] for c in as_a["candidates"]} == public | {few[0]["id"]}
        # a named record the caller cannot read is answered as a missing name
        hidden = service.search(few[1]["name"], caller=Caller()).wire()
        missing = service.search("Zzyzxqwerty", caller=Caller()).wire()
        assert few[1]["id"] not in json.dumps(strip_echo(hidden))
        assert hidden["intent"].get("entities") == missing["intent"].get("entities")
    finally:
        service.close()


def test_two_callers_alternating_one_query_are_never_served_each_other(
    tmp_path, pristine, embedder
):
    full, yaml = pristine
    service = _service(copy_home(full, tmp_path / "home"), yaml, embedder, cache="sqlite")
    try:
        acls = {rid: (["a"] if i % 2 else ["b"]) for i, rid in enumerate(IDS)}
        service.ingest_records(with_access(RECORDS, acls))
        readers = {p: {rid for rid, acl in acls.items() if p in acl} for p in ("a", "b")}
        first: dict[str, list[str]] = {}
        for i in range(100):
            who = "a" if i % 2 == 0 else "b"
            resp = service.search("AI code editor", caller=Caller.of([who])).wire()
            ids = [c["id"] for c in resp["candidates"]]
            assert ids and set(ids) <= readers[who]
            assert first.setdefault(who, ids) == ids
            assert resp["cache"]["hit"] is (i >= 2)
        assert first["a"] != first["b"]
    finally:
        service.close()


def test_a_changed_access_list_takes_effect_on_the_next_search_cache_included(
    tmp_path, pristine, embedder
):
    full, yaml = pristine
    service = _service(copy_home(full, tmp_path / "home"), yaml, embedder, cache="sqlite")
    try:
        target = RECORDS[0]
        acls = {rid: ["a"] for rid in IDS}
        service.ingest_records(with_access(RECORDS, acls))
        bob = Caller.of(["b"])
        before = service.search(target["name"], caller=bob).wire()
        assert target["id"] not in {c["id"] for c in before["candidates"]}
        assert service.search(target["name"], caller=bob).wire()["cache"]["hit"]
        # the record's list now names b: one payload write, which bumps the catalog version
        service.ingest_records(with_access([target], {target["id"]: ["a", "b"]}))
        after = service.search(target["name"], caller=bob).wire()
        assert not after["cache"]["hit"]
        assert after["candidates"][0]["id"] == target["id"]  # linked and pinned by its name
        # and taken away again
        service.ingest_records(with_access([target], {target["id"]: ["a"]}))
        again = service.search(target["name"], caller=bob).wire()
        assert target["id"] not in {c["id"] for c in again["candidates"]}
    finally:
        service.close()


#: What the recorded LLM answers: "Cursor" as the query's reference, exclusion and preserved
#: name, whoever asks; a plan without a reference source.
_LLM_INTENT = intent_answer(excluded_tools=["Cursor"], constraints=[])
_LLM_PLAN = plan_answer(
    vector_sources=[
        {
            "aspect": "functionality",
            "query_vector_source": "query_text",
            "text": "AI code completion editor",
            "top_k": 20,
        }
    ]
)


@pytest.fixture()
def recorded_llm() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OpenAI-compatible chat endpoint on loopback answering :data:`_LLM_INTENT` and
    :data:`_LLM_PLAN` (by the response format's schema name); yields (base URL, requests)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            asked.append(body)
            name = body.get("response_format", {}).get("json_schema", {}).get("name")
            data = json.dumps(
                chat_completion(json.dumps(_LLM_PLAN if name == "plan" else _LLM_INTENT))
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", asked
    finally:
        server.shutdown()
        server.server_close()


def test_the_llm_path_resolves_names_on_the_callers_view(
    tmp_path, pristine, embedder, recorded_llm
):
    """GIVEN the LLM path as the wiring builds it (the real openai client, a recorded
    endpoint on loopback) reading "Cursor" as the query's reference, exclusion and preserved
    name, and a caller who may not read Cursor WHEN it answers THEN the LLM's names resolve on
    the caller's records, as the rules' do: no reference, profile, exclusion, link, candidate
    or text of Cursor (another record's text may name it); a caller who may read it gets the
    reference (issue 44)."""
    base_url, asked = recorded_llm
    full, yaml = pristine
    settings = Settings(
        agentic_search_home=copy_home(full, tmp_path / "home"),
        cache_backend="none",
        openai_base_url=base_url,
        llm_model="recorded-model",
    )
    service = SearchService.create(settings, str(yaml), embedder=embedder)
    try:
        hidden = RECORDS[0]
        assert hidden["id"] == "cursor"
        acls = {rid: ["a"] for rid in IDS} | {hidden["id"]: ["b"]}
        service.ingest_records(with_access(RECORDS, acls))
        query = "alternative to Cursor for code completion"
        seen = service.search(query, caller=Caller.of(["a"])).wire()
        assert asked and seen["intent"]["extractor"].startswith("llm:")
        assert seen["intent"].get("referenceTool") is None
        assert not seen["intent"].get("referenceProfile")
        assert not seen["intent"].get("excludedTools")
        # "cursor" stays a word of the query (a keyword, a coverage term), never a record
        assert hidden["id"] not in {c["id"] for c in seen["candidates"]}
        assert hidden["id"] not in {e["id"] for e in seen["intent"].get("entities", [])}
        assert hidden["description"][:40] not in json.dumps(seen)
        as_b = service.search(query, caller=Caller.of(["b"])).wire()
        assert as_b["intent"]["extractor"].startswith("llm:")
        assert as_b["intent"].get("referenceTool") == hidden["id"]
    finally:
        service.close()
