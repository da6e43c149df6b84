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


def test_explain_labels_the_whole_search_and_the_executor_time() -> None:
    # issue 47 item 12: "latency 216 ms (pipeline 300 ms)" said neither what each one holds
    from agentic_search.wire import ExecutionStats
    from agentic_search_cli.render import timing_line

    stats = ExecutionStats(
        vector_queries_executed=2,
        structured_queries_executed=0,
        fusion_method="rrf",
        latency_ms=216,
        stage_ms={"extract_intent": 12.0, "round_1": 180.0, "total": 216.0, "pipeline_total": 300},
    )
    line = timing_line(stats)
    assert line.startswith("search 300 ms in all (cache check, intent, plan, rounds, answer)")
    assert "of which the executor 216 ms (rounds and hydration, from the plan on)" in line
    assert line.endswith("stages in ms: extract_intent 12.0, round_1 180.0")
