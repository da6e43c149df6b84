"""The README's timing figures say where they were measured (issue 25 finding 19): a fresh
clone did not reproduce "about 2 minutes" for `make test` or "about 15 s" for the first use,
each given without machine, load or date."""

from __future__ import annotations

import re

from support.paths import REPO

README = " ".join((REPO / "README.md").read_text().split())


def _sentence_around(phrase: str) -> str:
    at = README.index(phrase)
    return README[at : at + 500]


def test_the_make_test_figure_names_machine_load_and_date():
    text = _sentence_around("`make test` (what CI runs")
    assert "about 2 minutes" not in README
    assert re.search(r"quiet 2-core \w+", text) and re.search(r"\d{4}-\d{2}-\d{2}", text)
    assert re.search(r"pytest took \d+ min \d+ s", text) and "load average" in text


def test_the_first_use_figure_names_machine_load_and_date():
    text = _sentence_around("The first search indexes the 284 tools")
    assert "about 15 s" not in README
    assert "2-core" in text and "load average" in text
    assert re.search(r"\d{4}-\d{2}-\d{2}", text) and "CPU time" in text
