"""serve's answers of the last evaluation (issue 30, "the page can show the last eval's
figure"): ``GET /eval/last`` and ``/eval/last.png`` from ``$AGENTIC_SEARCH_HOME/eval/last``."""

from __future__ import annotations

import json

from agentic_search_cli import last_eval
from agentic_search_lambda.search_page import CONTENT_SECURITY_POLICY

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 64


def test_before_any_evaluation_the_summary_says_how_to_run_one_and_there_is_no_figure(tmp_path):
    status, headers, raw = last_eval.answer("GET", "/eval/last", tmp_path)
    assert status == 200 and headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    body = json.loads(raw)
    assert body["available"] is False and "agentic-search eval --dataset" in body["message"]
    status, headers, raw = last_eval.answer("GET", "/eval/last.png", tmp_path)
    assert status == 404 and json.loads(raw)["error"] == "NotFound"


def test_a_recorded_summary_and_figure_are_answered_as_written(tmp_path):
    summary = {"available": True, "dataset": "tiny", "figure": last_eval.FIGURE_FILE}
    last_eval.write_summary(tmp_path, summary)
    (last_eval.last_dir(tmp_path) / last_eval.FIGURE_FILE).write_bytes(PNG)
    status, _, raw = last_eval.answer("GET", "/eval/last", tmp_path)
    assert status == 200 and json.loads(raw) == summary
    status, headers, raw = last_eval.answer("GET", "/eval/last.png", tmp_path)
    assert (status, headers["content-type"], raw) == (200, "image/png", PNG)
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_a_summary_without_figure_has_no_png_even_if_an_old_file_is_there(tmp_path):
    last_eval.write_summary(tmp_path, {"available": True, "figure": None})
    (last_eval.last_dir(tmp_path) / last_eval.FIGURE_FILE).write_bytes(PNG)
    assert last_eval.answer("GET", "/eval/last.png", tmp_path)[0] == 404


def test_another_method_is_405_with_allow_get(tmp_path):
    status, headers, raw = last_eval.answer("POST", "/eval/last", tmp_path)
    assert status == 405 and headers["allow"] == "GET"
    assert json.loads(raw)["message"] == "POST /eval/last: use GET"


def test_an_unreadable_summary_counts_as_none(tmp_path):
    folder = last_eval.last_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / last_eval.SUMMARY_FILE).write_text("{not json")
    assert last_eval.read_summary(tmp_path) is None
    assert json.loads(last_eval.answer("GET", "/eval/last", tmp_path)[2])["available"] is False
