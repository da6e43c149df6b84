"""Measured figures and history live in docs/benchmarks.md and in git, never in the code's prose.

GIVEN every comment, docstring (of a module, class, function or attribute) and ``description=``
/ ``help=`` text (pydantic ``Field`` descriptions become JSON Schema text; argparse help becomes
``--help`` and the CLI reference) of layers/ and cli/ WHEN read, with its inline code literals
(````...````: examples of syntax, not figures) left out, THEN none quotes a measurement or a
piece of history:

* ``issue NN``: history, which is git's;
* two numbers joined by an arrow ("0.6 -> 0.7", "55-61 -> 50-52 ms"): a before/after;
* "fell/rose/went from X to Y" with numbers: a before/after in words;
* a retrieval metric with its value ("nDCG@10 0.769", "Recall@5: 0.836", "0.0034 nDCG@10"),
  or two decimals compared ("0.7318 vs 0.7352");
* a time in milliseconds or microseconds ("~2 ms", "0.044 ms a point", "~50 us"), or seconds
  given as approximate ("~0.3 s"), or a latency percentile with a value ("p95 52");
* a speed-up or saving ("~3x faster", "40% fewer");
* an approximate size ("~100 MB", "about 60 KB"): a measured footprint.

A limit that is a specification (Step Functions' 256 KB state limit, API Gateway's 10 MB body)
is no measurement and does not match; the reason for a choice stays in the prose, its figure
goes to docs/benchmarks.md with machine, date and command (tests/unit/test_doc_figures.py).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import REPO

ROOTS = (REPO / "layers", REPO / "cli")

#: What a measured figure or a piece of history looks like in prose (see the module docstring).
FIGURES: dict[str, re.Pattern[str]] = {
    "issue reference": re.compile(r"\bissues? #?\d+", re.I),
    "before -> after": re.compile(r"\d(?:[\d.,]*\d)?\s*%?\s*(?:->|→|=>)\s*[~≈]?\d"),
    "from X to Y": re.compile(
        r"\b(?:fell|rose|dropped|went|grew|improved|regressed|moved)\s+from\s+(?:\S+\s+){0,2}"
        r"\d[\d.,]*\s*\S*\s+to\s+\d",
        re.I,
    ),
    "X vs Y": re.compile(r"\d*\.\d+\s+(?:vs\.?|versus|against)\s+\d*\.\d+"),
    "metric value": re.compile(
        r"\b(?:nDCG|NDCG|ndcg|MRR|MAP|Recall|recall|Precision|precision|both|hit|success|P|R)"
        r"@\d+(?:\s*(?:of|=|:)\s*|\s+)(?:\d*\.\d+|1\.0|0)\b"
        r"|\d*\.\d+\s+(?:nDCG|NDCG|ndcg|MRR|Recall|recall|both|hit)@\d"
    ),
    "time": re.compile(
        r"\d+(?:\.\d+)?\s?(?:ms|us|µs)\b|[~≈]\s?\d+(?:\.\d+)?\s?s\b|\bp(?:50|90|95|99)\s+\d"
    ),
    "speed-up": re.compile(
        r"\d+(?:\.\d+)?\s?(?:x|×|%)\s+(?:faster|slower|fewer|more|less|smaller|larger|the speed)\b"
    ),
    "approximate size": re.compile(
        r"(?:[~≈]|\babout\s|\bsome\s|\broughly\s|\baround\s)\s?\d[\d.,]*\s?(?:KB|MB|GB|KiB|MiB|GiB)\b"
    ),
}

#: Inline code literals (``2020 -> 2022`` is an example of what a query may say).
LITERAL = re.compile(r"``.*?``|`[^`]*`")


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of each comment, docstring and description/help string in ``path``."""
    src = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            # a docstring, and an attribute's docstring (a string after an assignment)
            for i, stmt in enumerate(body):
                if not (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                ):
                    continue
                if i == 0 or isinstance(body[i - 1], ast.Assign | ast.AnnAssign):
                    yield stmt.lineno, stmt.value.value
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in ("description", "help"):
                    text = "".join(
                        n.value
                        for n in ast.walk(kw.value)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    )
                    if text:
                        yield kw.value.lineno, text


def figures_in(path: Path) -> list[str]:
    """Each figure of ``path``'s prose: ``path:line: [kind] the text around it``."""
    found = []
    for line, text in prose(path):
        flat = LITERAL.sub("``", " ".join(text.split()))
        for kind, pattern in FIGURES.items():
            for m in pattern.finditer(flat):
                around = flat[max(0, m.start() - 50) : m.end() + 30]
                found.append(f"{path.relative_to(REPO)}:{line}: [{kind}] ...{around}...")
    return found


FILES = sorted(p for root in ROOTS for p in root.rglob("*.py") if ".venv" not in p.parts)


def test_the_scan_reads_the_code() -> None:
    assert len(FILES) > 100
    assert sum(1 for p in FILES for _ in prose(p)) > 1000


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("(issue 27; benchmarks/README.md)", "issue reference"),
        ("min_relevance was 0.6 -> 0.7", "before -> after"),
        ("executor p95 55-61 -> 50-52 ms", "before -> after"),
        ("comparisons fell from nDCG@10 1.0 to 0.61", "from X to Y"),
        ("SciFact train nDCG@10 0.7363", "metric value"),
        ("odd ids: Recall@5 0.836 at 1", "metric value"),
        ("it cost 0.0034 nDCG@10", "metric value"),
        ("(0.7318 vs 0.7352)", "X vs Y"),
        ("a few hundred indices cost ~2 ms", "time"),
        ("at the same cost: 0.044 ms a point", "time"),
        ("~0.3 s to load", "time"),
        ("~3x faster for a 384-float list", "speed-up"),
        ("and ~100 MB in a CLI search", "approximate size"),
    ],
)
def test_each_pattern_finds_what_it_names(text: str, kind: str) -> None:
    assert FIGURES[kind].search(LITERAL.sub("``", text)), (kind, text)


@pytest.mark.parametrize(
    "text",
    [
        "kept under Step Functions' 256 KB state limit",
        "API Gateway's own limit is 10 MB",
        "``between 2020 and 2022``, ``2020-2022`` -> ``>= 2020``",
        "limit 1..100, rounds 1..5",
        "nDCG@10 on the held-out split (docs/benchmarks.md)",
        "the top 5 candidates",
    ],
)
def test_a_specification_or_an_example_is_no_figure(text: str) -> None:
    flat = LITERAL.sub("``", text)
    assert not [k for k, p in FIGURES.items() if p.search(flat)], text


def test_no_measured_figure_or_history_in_the_prose_of_layers_and_cli() -> None:
    found = [f for path in FILES for f in figures_in(path)]
    assert found == [], "\n".join(found)
