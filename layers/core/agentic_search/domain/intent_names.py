"""The naming step of the rule-based intent extractor: the records a query names (through the
query linker, or the catalog's names without one), the reference tool and the goal it implies
("alternative to X", "like X", "compared to X"), the excluded ones ("not Terraform"), and a
comparison between two or more named records ("X vs Y", "is X better than Y", "X or Y")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentic_search.domain import intent_patterns as P
from agentic_search.domain.intent import normalize_query, reference_profile

if TYPE_CHECKING:
    from agentic_search.domain.intent_rules import _Reading


def linked_products(self: _Reading) -> None:
    """The records the linker found (exact or fuzzy), located in the normalized query."""
    assert self.linking is not None
    q = self.q
    for link in self.linking.entities:
        surface = normalize_query(link.surface)
        for m in re.finditer(re.escape(surface), q):
            span = m.span()
            same = any((p[0], p[1]) == span for p in self.products)
            if self.free(span) or same:
                self.products.append((span[0], span[1], link.name.lower(), link.id))
                self.take(span)
                break


def read_names(self: _Reading) -> None:
    """Product names (longest first), the reference tool among them and the goal, the
    excluded tools ("not Terraform"); every product name is a must-preserve term."""
    q, query = self.q, self.query
    if self.linking is not None:
        linked_products(self)
    else:
        for pattern, name, rid in self.x.names:
            for m in pattern.finditer(q):
                if self.free(m.span()) and P.is_product_mention(query, q, m.start(), m.end()):
                    self.products.append((m.start(), m.end(), name, rid))
                    self.take(m.span())
    self.products.sort()
    ref_phrase_span: tuple[int, int] | None = None
    for start, end, _name, rid in self.products:
        prefix = q[:start]
        for pat, kind in P.REF_PATTERNS:
            m = re.search(pat + r"$", prefix)
            if m is not None:
                self.reference = (rid, q[start:end])
                self.goal = kind
                ref_phrase_span = (m.start(), end)
                break
        if self.reference:
            break
    if self.reference is None:
        for start, end, _name, rid in self.products:
            after = re.match(r"(?:'s)?\s*(?:alternatives?|replacements?)\b", q[end:])
            if after:
                self.reference, self.goal = (rid, q[start:end]), "alternative-to"
                ref_phrase_span = (start, end + len(after[0]))
                break
    if ref_phrase_span:
        self.constraint(ref_phrase_span)
    for start, end, _name, rid in self.products:
        neg = P.NEG_BEFORE.search(q[:start])
        if neg and (self.reference is None or rid != self.reference[0]):
            self.excluded.append(rid)
            self.constraint_spans.append((neg.start(), end))
    if self.reference:
        record = self.x.catalog.record(self.reference[0]) or {}
        self.profile = reference_profile(self.x.schema, record)
    for start, end, name, _ in self.products:
        original = re.search(re.escape(q[start:end]), query, re.IGNORECASE)
        term = original.group(0) if original else name
        if term not in self.must_preserve and preserve(self, start, end):
            self.must_preserve.append(term)
    # distinct names, not records: one name of two records ("The Hard Easy") compares nothing
    named = {(start, end) for start, end, *_ in self.products}
    if self.goal == "find":
        if (P.COMPARE.search(q) and len(named) >= 2) or (
            len(named) >= 2 and P.COMPARE_CUE.search(q)
        ):
            self.goal = "compare"
        elif P.EXPLAIN.search(q):
            self.goal = "explain"


def preserve(self: _Reading, start: int, end: int) -> bool:
    """Whether a product mention is kept verbatim for BM25: exact links are; a fuzzy one
    (a typo) is not, its record's name is asked instead (the reading's intent asks for it)."""
    if self.linking is None:
        return True
    span = self.q[start:end]
    return not any(
        lk.method == "fuzzy" and normalize_query(lk.surface) == span for lk in self.linking.entities
    )


__all__ = ["linked_products", "preserve", "read_names"]
