"""Write the AWS services catalog the aws_services query set is judged against.

Usage: python benchmarks/aws_services/catalog.py --out FILE.jsonl [--data DIR]

Reads the service models shipped inside the installed ``botocore`` package
(``DIR/<service>/<apiVersion>/service-2.json.gz``; ``DIR`` defaults to ``botocore/data``)
and writes one JSON record a line per service folder, sorted by folder name:

``{"id", "name", "summary", "api_version", "released", "protocol", "operations",
"signing_name"}``

* ``id``: the service folder name (``"s3"``); ``name``: ``metadata.serviceFullName``;
* ``summary``: the model's top-level ``documentation`` HTML as plain text (tags dropped by
  ``html.parser``, entities unescaped, whitespace collapsed), cut at the last sentence end
  before about 600 characters (at a word when no sentence ends there);
* ``api_version``: the newest ``apiVersion`` folder (``"YYYY-MM-DD"``), the model read;
* ``released``: the integer year of the oldest ``apiVersion`` folder present (roughly when
  the API appeared; botocore keeps older versions of only a few services);
* ``protocol``: ``metadata.protocol``; ``operations``: how many operations the model has;
  ``signing_name``: ``metadata.signingName``, or the ``id`` when the model has none.

A folder without a ``service-2.json.gz`` under a dated folder is skipped. Raises
``SystemExit`` (exit 2) when the data directory is missing or holds no service model.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

SUMMARY_CHARS = 600
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SPACE = re.compile(r"\s+")
#: Tags after which a sentence or paragraph ends, so words on either side stay apart.
_BREAKS = {
    "fullname",
    "p",
    "br",
    "li",
    "ul",
    "ol",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "dt",
    "dd",
    "td",
    "tr",
}


class _Text(HTMLParser):
    """Collects the text of an HTML fragment (entities unescaped by ``convert_charrefs``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BREAKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BREAKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def plain_text(html: str) -> str:
    """``html`` as one line of plain text: tags dropped, entities unescaped, runs of
    whitespace made one space, ends stripped. Never raises on malformed HTML."""
    parser = _Text()
    parser.feed(html or "")
    parser.close()
    return _SPACE.sub(" ", "".join(parser.parts)).strip()


def cut(text: str, limit: int = SUMMARY_CHARS) -> str:
    """``text`` if it has at most ``limit`` characters, else its longest prefix ending a
    sentence (``.``, ``!`` or ``?`` followed by a space) within ``limit``, or, when no
    sentence ends after the first third, the prefix up to the last space before ``limit``."""
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", head)]
    if ends and ends[-1] >= limit // 3:
        return head[: ends[-1]].strip()
    space = head.rfind(" ")
    return head[: space if space > 0 else limit].strip()


def versions(folder: Path) -> list[str]:
    """The ``YYYY-MM-DD`` subfolders of ``folder`` holding a ``service-2.json.gz``,
    oldest first (empty when there is none)."""
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.is_dir() and _DATE.match(p.name) and (p / "service-2.json.gz").is_file()
    )


def record(folder: Path) -> dict | None:
    """The catalog record of one service folder (shape in the module docstring), or
    ``None`` when it holds no dated model. Raises ``OSError``/``ValueError`` on an
    unreadable or non-JSON model."""
    dated = versions(folder)
    if not dated:
        return None
    with gzip.open(folder / dated[-1] / "service-2.json.gz", "rt", encoding="utf-8") as fh:
        model = json.load(fh)
    meta = model.get("metadata", {})
    return {
        "id": folder.name,
        "name": meta.get("serviceFullName") or folder.name,
        "summary": cut(plain_text(model.get("documentation", ""))),
        "api_version": dated[-1],
        "released": int(dated[0][:4]),
        "protocol": meta.get("protocol", ""),
        "operations": len(model.get("operations", {})),
        "signing_name": meta.get("signingName") or folder.name,
    }


def catalog(data: Path) -> list[dict]:
    """Every service record under ``data``, sorted by id (folders without a model skipped)."""
    out = []
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        rec = record(folder)
        if rec is not None:
            out.append(rec)
    return out


def default_data() -> Path:
    """The ``data`` folder of the installed ``botocore`` (``ImportError`` without it)."""
    import botocore

    return Path(botocore.__file__).resolve().parent / "data"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True, help="the catalog to write (.jsonl)")
    ap.add_argument("--data", type=Path, help="botocore's data folder (default: the installed)")
    args = ap.parse_args()
    data = args.data or default_data()
    if not data.is_dir():
        sys.stderr.write(f"no such folder: {data}\n")
        return 2
    records = catalog(data)
    if not records:
        sys.stderr.write(f"no service model under {data}\n")
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
