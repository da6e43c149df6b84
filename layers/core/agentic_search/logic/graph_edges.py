"""Edges of the entity graph from record texts, pure (the link pass in
:mod:`agentic_search.sync.links` stores them): a record's out-edges by kind, the in-edges they
imply, and edge maps merged."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentic_search.logic.chunking import doc_id_of
from agentic_search.logic.entities import EntityIndex, tokens
from agentic_search.logic.schema import DomainSchema

#: Phrases before a name that make its edge an ``integrates`` edge.
_INTEGRATES = re.compile(
    r"(?:integrat\w*|plugins?|extensions?|add-ons?|works?|connects?|connectors?|support\w*)"
    r"\s+(?:\w+\s+){0,2}(?:with|for|to|in|into|inside)\s+(?:\w+\s+){0,4}$",
    re.IGNORECASE,
)
Edges = dict[str, list[str]]

#: Words before a name that make a record name it as what it replaces or resembles ("a
#: faster alternative to webpack", "fork of Cline", "forked from Elasticsearch", "lighter
#: than Moment", "imitates the GitHub Copilot backend").
_AS_ALTERNATIVE_BEFORE = re.compile(
    r"(?:(?:alternatives?|replacements?|substitutes?|successors?|equivalents?)\s+(?:to|for|of)|"
    r"instead\s+of|similar\s+to|inspired\s+by|compatible\s+with|modell?ed\s+(?:on|after)|"
    r"(?:forks?|clones?|ports?|rewrites?|reimplementations?|versions?)\s+of|"
    r"(?:forked|cloned|ported)\s+from|"
    r"compared\s+(?:to|with)|replac(?:es|ing)|drop-in\s+for|like|than|vs\.?|versus|unlike|"
    r"(?:imitat|mimic|emulat|clon)\w*)"
    r"\s+(?:the\s+|an?\s+)?$",
    re.IGNORECASE,
)
#: Words after a name that do the same ("Midjourney-like", "ChatGPT-style", "an Express
#: alternative", "Redis-compatible", "a VS Code fork").
_AS_ALTERNATIVE_AFTER = re.compile(
    r"^(?:'s)?[\s-]*(?:like|style|compatible|alternatives?|replacements?|clones?|forks?|"
    r"equivalents?)\b",
    re.IGNORECASE,
)


def out_edges(
    schema: DomainSchema, index: EntityIndex, record: Mapping[str, Any], self_id: str
) -> Edges:
    """A record's out-edges by kind from its link fields (``mention``, ``integrates``); the
    similar edges are added by the caller (they need the store)."""
    spec = schema.entities
    if spec is None:
        return {}
    edges: dict[str, dict[str, None]] = {}
    me = doc_id_of(self_id)
    for fname in spec.link_fields:
        text = link_text_of(record.get(fname))
        for m in index.scan(text):
            kind = "mention"
            if fname == spec.relations.integrates_field and _INTEGRATES.search(text[: m.start]):
                kind = "integrates"
            for rid in m.ids:
                if doc_id_of(rid) != me:
                    edges.setdefault(kind, {})[doc_id_of(rid)] = None
    return {k: list(v) for k, v in sorted(edges.items())}


#: Words before a name that make a record name it as what it plugs into or runs on ("a file
#: loader module for webpack", "runs locally via Ollama", "built on Selenium").
_PLUGGED_BEFORE = re.compile(
    r"(?:for|into|inside|within|on\s+top\s+of|on|in|with|via|through|using|uses|built\s+on|"
    r"based\s+on|extends|wraps|powered\s+by)\s+(?:the\s+|an?\s+|your\s+|any\s+)?$",
    re.IGNORECASE,
)
#: Words after a name that do the same ("a Webpack loader", "VS Code extension", "pytest
#: plugin", "Django middleware", "React hooks").
_PLUGGED_AFTER = re.compile(
    r"^(?:'s)?[\s-]*(?:plugins?|extensions?|loaders?|add-?ons?|integrations?|adapters?|"
    r"bindings?|wrappers?|middlewares?|presets?|configs?|types|typings|helpers?|utils?|"
    r"utilities|components?|hooks?|modules?|rules|themes?|templates?|sdks?|clients?|"
    r"drivers?|connectors?|support|apps?|projects?|builds?|servers?)\b",
    re.IGNORECASE,
)


def _name_spans(text: str, names: Sequence[str]) -> list[tuple[str, str]]:
    """(text before, text after) of each place ``text`` holds one of the folded ``names``
    as whole words (case- and accent-insensitive)."""
    wanted = {tuple(n.split(" ")) for n in names if n}
    if not wanted or not text:
        return []
    toks = tokens(text)
    folded = [t.folded for t in toks]
    out = []
    for first in range(len(toks)):
        for name in wanted:
            last = first + len(name)
            if tuple(folded[first:last]) == name:
                out.append((text[: toks[first].start], text[toks[last - 1].end :]))
    return out


def names_as_addon(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` names one of the folded ``names`` as what it plugs into or runs on
    ("a file loader module for webpack", "a VS Code extension", "built on Selenium") and
    nowhere as what it replaces or resembles (:func:`names_as_alternative`): a record whose
    text says so is an add-on of that record. A mention of another kind ("acquired by the
    maker of Cursor") is neither."""
    spans = _name_spans(text, names)
    if not spans or any(_as_alternative(b, a) for b, a in spans):
        return False
    return any(_PLUGGED_BEFORE.search(b) or _PLUGGED_AFTER.match(a) for b, a in spans)


def _as_alternative(before: str, after: str) -> bool:
    return bool(_AS_ALTERNATIVE_BEFORE.search(before) or _AS_ALTERNATIVE_AFTER.match(after))


def names_as_alternative(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` names one of the folded ``names`` as what it replaces or resembles
    ("a faster alternative to webpack", "fork of Cline", "Midjourney-like") rather than as
    what it plugs into or runs on ("webpack loader for YAML", "runs locally via Ollama"):
    an in-mention of X from such a text makes its record an alternative to X. Matched on the
    folded words of ``text`` (case- and accent-insensitive)."""
    return any(_as_alternative(b, a) for b, a in _name_spans(text, names))


def link_text_of(value: Any) -> str:
    """A field value as the text scanned for mentions (list items joined by ". ")."""
    if isinstance(value, list):
        return ". ".join(str(v) for v in value if v is not None)
    return "" if value is None else str(value)


def invert(out: Mapping[str, Edges]) -> dict[str, Edges]:
    """In-edges by target from out-edges by source: ``{target: {kind: [sources]}}``."""
    inv: dict[str, dict[str, dict[str, None]]] = {}
    for src, edges in out.items():
        for kind, targets in edges.items():
            for t in targets:
                inv.setdefault(t, {}).setdefault(kind, {})[src] = None
    return {t: {k: list(v) for k, v in sorted(e.items())} for t, e in inv.items()}


def names_map(named: Iterable[tuple[str, Sequence[str]]]) -> dict[str, list[str]]:
    """{folded name: record ids} from (record id, folded names) pairs."""
    out: dict[str, list[str]] = {}
    for rid, names in named:
        for n in names:
            out.setdefault(n, []).append(rid)
    return out


def merge_edges(a: Mapping[str, Sequence[str]], b: Mapping[str, Sequence[str]]) -> Edges:
    """The union of two edge maps, kind by kind (first occurrence order; empty kinds gone)."""
    out: Edges = {k: list(v) for k, v in a.items()}
    for kind, targets in b.items():
        out[kind] = list(dict.fromkeys([*out.get(kind, []), *targets]))
    return {k: v for k, v in sorted(out.items()) if v}


__all__ = ["Edges", "invert", "link_text_of", "merge_edges", "names_map", "out_edges"]
