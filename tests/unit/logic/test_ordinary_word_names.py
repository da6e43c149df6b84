"""Record names that are ordinary words, in a catalog whose names are all lowercase (as every
PyPI name is): such a name is linked only in a naming context or when the catalog does not use
it as an ordinary word, and a misspelt ordinary word is corrected to the word rather than
fuzzy-linked to a name one edit away ("pdf tabel extraction" is not the record babel; "on
Mars" is not the record mgrs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_search.logic.entities import common_words
from agentic_search.logic.intent import CatalogLookup
from agentic_search.logic.intent_rules import RuleBasedIntentExtractor
from agentic_search.logic.schema import DomainSchema, load_schema
from agentic_search.logic.text import default_analyzer

YAML = """\
name: pkgs
version: 1
title_field: name
text_field: summary
fields:
  id: {type: string, required: true}
  name: {type: string, required: true}
  summary: {type: string}
aspects:
  - name: about
    fields: [name, summary]
keyword_fields: [name, summary]
structured_sort: {field: name, order: asc}
entities:
  names: [name]
  link_fields: [summary]
"""

#: name -> summary: names that are ordinary words (parse, schema, excel, tables, vector,
#: para), names that are not (pytest, camelot), and babel and mgrs, one edit from "tabel"
#: and "Mars"
PACKAGES = {
    "parse": "format() in reverse: pull values out of strings",
    "schema": "simple data validation library",
    "excel": "a small reader of spreadsheet workbooks",
    "tables": "hierarchical datasets on top of HDF5",
    "vector": "fixed-size numeric arrays",
    "para": "a parallel map in one line",
    "babel": "internationalization utilities",
    "mgrs": "MGRS coordinate conversion",
    "pytest": "simple powerful testing with Python",
    "camelot": "PDF table extraction for humans",
    "ruamel-yaml": "a YAML parser that parses and round-trips comments",
    "jsonschema": "JSON schemas: validate documents against schemas",
    "openpyxl": "read and write excel files",
    "xlsxwriter": "write excel files with charts",
    "pandas-excel": "load excel sheets into data frames",
    "tabulate": "pretty-print tabular data as a table",
    "numpy-vec": "vectors and matrices, vectorized",
    "herramienta": "herramienta para leer archivos",
    "utiles": "utilidades para fechas",
    "textos": "funciones para textos",
    "pytest-cov": "coverage plugin for pytest",
    "pytest-mock": "thin wrapper around mock for pytest",
}


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> DomainSchema:
    path = Path(tmp_path_factory.mktemp("pkgs")) / "pkgs.yaml"
    path.write_text(YAML)
    return load_schema(path)


@pytest.fixture(scope="module")
def extractor(schema: DomainSchema) -> RuleBasedIntentExtractor:
    records = [{"id": n, "name": n, "summary": s} for n, s in PACKAGES.items()]
    analyzer = default_analyzer()
    vocabulary = {t for r in records for t in analyzer.terms(" ".join(r.values()))}
    lookup = CatalogLookup.of(
        schema,
        records,
        known=lambda terms: {t for t in terms if t in vocabulary},
        analyzer=analyzer,
    )
    return RuleBasedIntentExtractor(schema, lookup)


def _linked(extractor: RuleBasedIntentExtractor, query: str) -> list[str]:
    return [lk.id for lk in extractor.extract(query).linked]


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("parse yaml safely", "parse"),  # others parse, parser: an ordinary verb here
        ("schema validation for json", "schema"),  # others say schemas
        ("excel export of a report", "excel"),  # three others write excel in lowercase
        ("tables in a pdf", "tables"),  # others say table
        ("vector math", "vector"),  # others say vectors, vectorized
        ("herramienta para leer pdf", "para"),  # three others use it as a word
    ],
)
def test_a_lowercase_name_used_as_an_ordinary_word_is_not_linked(
    extractor: RuleBasedIntentExtractor, query: str, word: str
) -> None:
    assert word not in _linked(extractor, query)


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("alternative to parse", "parse"),
        ("schema vs jsonschema", "schema"),
        ("Excel", "excel"),
    ],
)
def test_an_ordinary_word_name_is_linked_in_a_naming_context(
    extractor: RuleBasedIntentExtractor, query: str, word: str
) -> None:
    assert word in _linked(extractor, query)


def test_a_lowercase_name_the_catalog_uses_only_as_a_name_is_linked(
    extractor: RuleBasedIntentExtractor,
) -> None:
    # pytest is written lowercase by two other records, never inflected: its name there
    assert _linked(extractor, "pytest fixtures") == ["pytest"]


def test_the_ordinary_words_are_found_from_other_records_texts() -> None:
    names = ["parse", "pytest", "tables", "para"]
    texts = [
        (["ruamel-yaml"], "a parser that parses"),
        (["tabulate"], "print a table"),
        (["a"], "herramienta para leer"),
        (["b"], "utilidades para fechas"),
        (["c"], "funciones para textos"),
        (["pytest-cov"], "coverage plugin for pytest"),
        (["pytest"], "pytest: simple powerful testing, the pytest way"),
    ]
    assert common_words(names, texts, lowercase_names=names) == {"parse", "tables", "para"}
    # a name's own record does not count: only pytest's own text and one other use it
    assert "pytest" not in common_words(names, texts, lowercase_names=names)


def test_a_misspelt_ordinary_word_is_corrected_not_linked_to_a_name(
    extractor: RuleBasedIntentExtractor,
) -> None:
    intent = extractor.extract("pdf tabel extraction")
    assert "babel" not in [lk.id for lk in intent.linked]
    assert "table" in intent.normalized_query.split()


def test_a_capitalized_word_is_not_fuzzy_linked_to_a_name(
    extractor: RuleBasedIntentExtractor,
) -> None:
    assert "mgrs" not in _linked(extractor, "weather forecasts on Mars")
    # a lowercase misspelling of a longer name still links
    assert "camelot" in _linked(extractor, "camelott tables")
