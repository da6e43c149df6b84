"""--explain's path lines show the merged intent's per-field origins and overruled constraints."""

from __future__ import annotations

from agentic_search_cli.render import path_lines


def test_explain_prints_field_origins_and_overruled_llm_constraints() -> None:
    paths = {
        "extractor": {
            "path": "llm",
            "reason": "llm:m: answer within the schema, merged with the rules",
            "fields": {"constraints": "both", "translation": "llm", "matches": "rules"},
            "overruled": ["pricing_model in [Free, Paid]"],
        }
    }
    lines = path_lines(paths)
    assert "  fields: constraints=both, translation=llm, matches=rules" in lines
    assert "  LLM constraints overruled by the rules: pricing_model in [Free, Paid]" in lines


def test_no_field_lines_on_the_rules_path() -> None:
    lines = path_lines({"extractor": {"path": "rules", "reason": "LLM off"}})
    assert lines == ["intent path: rules - LLM off"]
