"""Write the npm catalog the npm query set is judged against.

Usage: python benchmarks/npm_queries/catalog.py --tsv PATH --out FILE.jsonl [--size N]

Reads a tab-separated package list (a header line, then ``name``, ``version``,
``downloads_a_month``, ``summary`` a line) and writes the ``--size`` (default 12,000)
most-downloaded packages whose summary is not empty, one JSON record a line:
``{"id", "name", "summary", "version", "downloads", "rank"}`` (``id`` is the package name,
``downloads`` an integer, ``rank`` 1 for the most downloaded). A summary that starts with a
``[tested here: ...]`` bracket has it removed first: those words are not the package
authors'. Order and ties are deterministic: downloads descending, then name ascending.

Raises ``SystemExit`` (exit 2) when the file is missing or holds fewer packages than asked.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

PREFIX = "[tested here:"


def strip_note(summary: str) -> str:
    """``summary`` without a leading ``[tested here: ...]`` bracket (nested brackets kept
    balanced), surrounding whitespace removed. A bracket never closed is left as written."""
    text = summary.strip()
    if not text.startswith(PREFIX):
        return text
    depth = 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return text[i + 1 :].strip()
    return text


def read_packages(path: Path) -> list[dict]:
    """Every row of the TSV with a non-empty summary after :func:`strip_note`, as
    ``{"name", "version", "downloads", "summary"}`` (rows with a non-integer download count
    are skipped)."""
    rows = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(reader, None)
        for row in reader:
            if len(row) < 4:
                continue
            name, version, downloads, summary = row[0], row[1], row[2], "\t".join(row[3:])
            summary = strip_note(summary)
            if not summary or not name:
                continue
            try:
                count = int(downloads)
            except ValueError:
                continue
            rows.append({"name": name, "version": version, "downloads": count, "summary": summary})
    return rows


def top(rows: list[dict], size: int) -> list[dict]:
    """The ``size`` most-downloaded rows (ties by name), as catalog records with a rank.
    A name listed twice keeps its first (most-downloaded) row."""
    ordered = sorted(rows, key=lambda r: (-r["downloads"], r["name"]))
    out: list[dict] = []
    seen: set[str] = set()
    for r in ordered:
        if r["name"] in seen:
            continue
        seen.add(r["name"])
        out.append(
            {
                "id": r["name"],
                "name": r["name"],
                "summary": r["summary"],
                "version": r["version"],
                "downloads": r["downloads"],
                "rank": len(out) + 1,
            }
        )
        if len(out) == size:
            break
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tsv", type=Path, required=True, help="the package list (TSV)")
    ap.add_argument("--out", type=Path, required=True, help="the catalog to write (.jsonl)")
    ap.add_argument("--size", type=int, default=12000, help="packages to keep (default 12000)")
    args = ap.parse_args()
    if not args.tsv.is_file():
        sys.stderr.write(f"no such file: {args.tsv}\n")
        return 2
    records = top(read_packages(args.tsv), args.size)
    if len(records) < args.size:
        sys.stderr.write(f"only {len(records)} packages with a summary in {args.tsv}\n")
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
