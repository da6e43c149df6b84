"""The bundled catalog's shipped enrichment: a file edited by hand is refused, and the shipped
file (when there is one) answers for every record of the bundled catalog as it is now, by the
current prompt: a record whose text changed without `make enrich` being run fails here."""

from __future__ import annotations

import json

import pytest

from agentic_search.logic.enrichment import CATALOG_PROMPT, record_prompt_text, text_sha256
from agentic_search.logic.schema import load_domain
from agentic_search.sync.files import bundled_catalog_path, read_catalog
from agentic_search.sync.shipped_enrichment import (
    ShippedEnrichmentError,
    parse_shipped,
    render_shipped,
    shipped_path,
)

HEADER = {"model": "m", "model_sha256": "0" * 64, "prompt_version": "catalog-v0"}
ENTRY = {"id": "a", "text_sha256": "1" * 64, "answer": {"needs": ["fix it"], "category": "c"}}


def test_a_rendered_file_parses_and_answers_only_for_the_same_text_and_prompt():
    shipped = parse_shipped(render_shipped(HEADER, [ENTRY]))
    assert shipped.answer_for("a", "1" * 64, "catalog-v0") == ENTRY["answer"]
    assert shipped.answer_for("a", "2" * 64, "catalog-v0") is None
    assert shipped.answer_for("a", "1" * 64, "catalog-v1") is None
    assert shipped.header["records"] == 1


def test_a_file_edited_by_hand_is_refused():
    text = render_shipped(HEADER, [ENTRY])
    edited = text.replace('"fix it"', '"fix it by hand"')
    with pytest.raises(ShippedEnrichmentError, match="edited by hand"):
        parse_shipped(edited)
    header, *rest = text.splitlines()
    forged = json.loads(header) | {"body_sha256": "f" * 64}
    with pytest.raises(ShippedEnrichmentError, match="body_sha256"):
        parse_shipped("\n".join([json.dumps(forged), *rest]))


def test_the_shipped_file_matches_the_bundled_catalog_and_the_current_prompt():
    path = shipped_path("tools")
    if not path.is_file():
        pytest.skip("no shipped enrichment yet (`make enrich` writes it)")
    shipped = parse_shipped(path.read_text(encoding="utf-8"))  # not edited by hand
    assert shipped.header["prompt_version"] == CATALOG_PROMPT.version
    assert shipped.header["prompt_sha256"] == CATALOG_PROMPT.sha256
    assert len(shipped.header["model_sha256"]) == 64
    schema = load_domain("tools")
    records = read_catalog(bundled_catalog_path(), schema).records
    stale = [
        r["id"]
        for r in records
        if (e := shipped.entries.get(r["id"])) is None
        or e["text_sha256"] != text_sha256(record_prompt_text(schema, r))
    ]
    assert not stale, f"records changed since `make enrich`: {stale[:10]}"
