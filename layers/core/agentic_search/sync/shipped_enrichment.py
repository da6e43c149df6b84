"""A domain's shipped enrichment: the LLM's answers for a bundled catalog, generated once
(``make enrich``) and read by the first-use index, so that no LLM is needed to search it.

The file sits next to the catalog (``data/<domain>.enrichment.jsonl``). Its first line is a
header: the model's file name and sha256, the prompt's version and sha256, the date, the
embedder the kept needs were filtered with, and ``body_sha256``, the SHA-256 of every
following line as written; each following line is one record: its ``id``, the SHA-256 of the
text its prompt read (``text_sha256``) and the LLM's ``answer``. A record whose text changed
since has another text hash and gets no answer from the file; a file edited by hand no longer
matches its ``body_sha256`` and is not read at all (``tests/unit/sync/test_shipped_enrichment.py``
fails on either).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any


class ShippedEnrichmentError(ValueError):
    """The shipped file does not parse or does not match its own checksum."""


@dataclass(frozen=True)
class ShippedEnrichment:
    """A parsed shipped file: its header and the answers by record id."""

    header: dict[str, Any]
    entries: dict[str, dict[str, Any]]

    @property
    def model(self) -> str:
        """The model identity the answers are keyed by (the GGUF's name)."""
        return str(self.header["model"])

    def answer_for(
        self, record_id: str, text_hash: str, prompt_version: str
    ) -> dict[str, Any] | None:
        """The answer for the record when the file holds one for the same text and prompt."""
        if self.header.get("prompt_version") != prompt_version:
            return None
        entry = self.entries.get(record_id)
        if entry is None or entry.get("text_sha256") != text_hash:
            return None
        return dict(entry["answer"])


def shipped_path(domain: str) -> Path:
    """Where the domain's shipped enrichment would be (package data)."""
    return Path(str(resources.files("agentic_search") / "data" / f"{domain}.enrichment.jsonl"))


def body_sha256(lines: list[str]) -> str:
    """SHA-256 of the record lines as written (each with its newline)."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.rstrip("\n").encode("utf-8") + b"\n")
    return h.hexdigest()


def parse_shipped(text: str) -> ShippedEnrichment:
    """Parse a shipped file's text.

    Raises:
        ShippedEnrichmentError: when it does not parse, or its body does not match the
            header's ``body_sha256`` (edited by hand).
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ShippedEnrichmentError("the shipped enrichment file is empty")
    try:
        header = json.loads(lines[0])
        entries = [json.loads(ln) for ln in lines[1:]]
    except ValueError as exc:
        raise ShippedEnrichmentError(f"the shipped enrichment file does not parse: {exc}") from exc
    if body_sha256(lines[1:]) != header.get("body_sha256"):
        raise ShippedEnrichmentError(
            "the shipped enrichment file does not match its body_sha256: it was edited by "
            "hand; regenerate it with `make enrich`"
        )
    return ShippedEnrichment(header, {str(e["id"]): e for e in entries})


def render_shipped(header: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    """The file's text for ``header`` (its ``body_sha256`` set here) and ``entries``."""
    lines = [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in entries]
    head = {**header, "body_sha256": body_sha256(lines), "records": len(lines)}
    return "\n".join([json.dumps(head, sort_keys=True), *lines]) + "\n"


@lru_cache(maxsize=8)
def shipped_enrichment(domain: str) -> ShippedEnrichment | None:
    """The domain's shipped enrichment, None when it ships none or the file is not valid
    (a damaged file is never read: the records go without, as with ``ENRICH=off``)."""
    path = shipped_path(domain)
    if not path.is_file():
        return None
    try:
        return parse_shipped(path.read_text(encoding="utf-8"))
    except (ShippedEnrichmentError, KeyError):
        return None


__all__ = [
    "ShippedEnrichment",
    "ShippedEnrichmentError",
    "body_sha256",
    "parse_shipped",
    "render_shipped",
    "shipped_enrichment",
    "shipped_path",
]
