"""``agentic-search init-domain``: draft a commented domain schema YAML from a catalog file
(:mod:`agentic_search_cli.draft_domain`)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from agentic_search_cli.common import positive_int, usage_error


def add_parser(sub: Any) -> None:
    """Register ``init-domain``."""
    from agentic_search_cli.draft_domain import DEFAULT_SAMPLE

    p = sub.add_parser(
        "init-domain",
        help="draft a domain schema YAML from a catalog file (JSON Lines, JSON or CSV)",
        description=(
            "Read a sample of a catalog's records and write a commented draft of its domain\n"
            "schema: each field's type and whether records leave it empty, the id and title\n"
            "fields, the text fields (embedded in one whole-record vector and keyword-\n"
            "searched), the low-cardinality fields (filters, and vocabularies offered with\n"
            "their values), numeric fields (bounds such as 'under 20'), the time field\n"
            "('since 2024') and a popularity field to rank by. Prints what it guessed and\n"
            "what to check. The draft indexes as it is; edit it, then ingest:\n\n"
            "  agentic-search init-domain products.csv\n"
            "  agentic-search ingest products.csv --domain products.yaml\n"
            "  agentic-search search 'a quiet desk fan under 30' --domain products\n\n"
            "A CSV's header names the fields; a list cell holds values separated by ';'.\n"
            "docs/guides/bring-your-own-catalog.md walks through it."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, metavar="FILE", help="the catalog: .jsonl, .json or .csv")
    p.add_argument(
        "--name",
        default=None,
        metavar="N",
        help="the domain's name (default: the file's name, lowercased; letters, digits, - _)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE.yaml",
        help="where to write the draft (default NAME.yaml in the current folder)",
    )
    p.add_argument(
        "--sample",
        type=positive_int,
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"records read, the first of the file (default {DEFAULT_SAMPLE})",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing --out file")


def domain_name(path: Path) -> str:
    """A valid domain name from a file name: ``My Products.csv`` -> ``my-products``."""
    stem = re.sub(r"[^a-z0-9_-]+", "-", path.stem.lower()).strip("-_")
    if not stem or not stem[0].isalpha():
        stem = f"catalog-{stem}".rstrip("-")
    return stem


def run(args: argparse.Namespace) -> int:
    """Run ``init-domain``; returns the exit code (2 for a usage error, 1 for a file it
    cannot draft from)."""
    from agentic_search.sync.files import CatalogFormatError
    from agentic_search_cli.draft_domain import DraftError, draft_domain, read_sample

    name = args.name or domain_name(args.file)
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        usage_error(f"--name {name!r}: lowercase letters, digits, - and _, starting with a letter")
    if name in ("tools", "documents"):
        usage_error(f"--name {name!r} is a built-in domain's name: choose another")
    out: Path = args.out or Path(f"{name}.yaml")
    if out.exists() and not args.force:
        usage_error(f"{out} exists: --force to overwrite it, or --out another file")
    try:
        records, whole = read_sample(args.file, args.sample)
        draft = draft_domain(records, name, whole, args.file.name)
    except FileNotFoundError:
        usage_error(f"no such file: {args.file}")
    except (CatalogFormatError, DraftError, UnicodeDecodeError, ValueError) as exc:
        sys.stderr.write(f"agentic-search: error: {args.file}: {exc}\n")
        return 1
    out.write_text(draft.yaml, encoding="utf-8")
    print(f"wrote {out}: a draft domain {name!r} from {len(records)} records of {args.file.name}")
    print("guessed:")
    for line in draft.guessed:
        print(f"  - {line}")
    print("check:")
    for line in draft.check:
        print(f"  - {line}")
    print(f"next: agentic-search ingest {args.file} --domain {out}")
    return 0
