"""Entity names, the entity index's scan of texts, and the edges it implies (pure)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from agentic_search.logic.entities import (
    EntityIndex,
    common_words,
    fold,
    lowercase_names,
    name_variants,
    record_names,
)
from agentic_search.logic.graph_edges import invert, merge_edges, out_edges
from agentic_search.logic.schema import load_schema

TOOLS = load_schema("tools")
DOCS = load_schema("documents")


def test_fold_is_accent_case_and_punctuation_insensitive():
    assert fold("Café  Ñandú!") == "cafe nandu"
    assert fold("Arthur's Magazine") == "arthur s magazine"
    assert fold("DALL·E 3") == fold("dall e 3") == "dall e 3"
    assert fold("  ") == ""


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_fold_of_ascii_text_equals_the_decomposing_path(text: str) -> None:
    """GIVEN ASCII text WHEN folded THEN the result is the one NFKD decomposition gives (the
    ASCII shortcut changes nothing)."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    assert fold(text) == " ".join(re.findall(r"\w+", plain.casefold().replace("_", " ")))


def test_names_are_titles_without_their_qualifier_and_aliases():
    assert name_variants("Kiss and Tell (1945 film)") == [
        "kiss and tell 1945 film",
        "kiss and tell",
    ]
    assert name_variants("Boston, Lincolnshire") == ["boston lincolnshire"]
    rec = {"id": "vs-code", "name": "Visual Studio Code", "aliases": ["VS Code", "VSCode"]}
    assert record_names(TOOLS, rec) == ["visual studio code", "vs code", "vscode"]
    assert record_names(DOCS, {"id": "d", "title": "Shirley Temple", "text": "x"}) == [
        "shirley temple"
    ]
    assert lowercase_names(TOOLS, {"name": "pgvector"}) == ["pgvector"]
    assert lowercase_names(TOOLS, {"name": "Qdrant"}) == []


def _index(common=()):
    return EntityIndex(
        {
            "kiss and tell": ["film"],
            "shirley temple": ["st"],
            "temple": ["temple"],
            "whisper": ["whisper"],
            "the": ["the"],
        },
        common,
    )


def test_scan_takes_the_longest_name_and_never_overlaps():
    idx = _index()
    found = idx.scan("Kiss and Tell starred Shirley Temple as Corliss Archer.")
    assert [(m.name, m.ids) for m in found] == [
        ("kiss and tell", ("film",)),
        ("shirley temple", ("st",)),  # not "temple" inside it
    ]
    assert found[1].surface == "Shirley Temple"


def test_an_ambiguous_word_counts_only_capitalized_and_not_opening_a_sentence():
    idx = _index(common={"whisper"})
    assert [m.name for m in idx.scan("Transcribed with Whisper locally.")] == ["whisper"]
    assert idx.scan("Speak in a whisper.") == []
    assert idx.scan("Whisper it. Then go.") == []  # sentence start: just a word
    # without the case rule (a query) the caller decides
    assert [m.name for m in idx.scan("whisper", cased=False)] == ["whisper"]
    # stopwords never name anything
    assert all(m.name != "the" for m in idx.scan("The film"))


def test_common_words_are_names_the_corpus_uses_in_lowercase():
    names = ["whisper", "pgvector", "ollama", "shirley temple"]
    texts = ["a quiet whisper", "store vectors in pgvector", "Ollama runs models"]
    assert common_words(names, texts) == {"whisper", "pgvector"}
    # a name the record itself spells in lowercase is never common
    assert common_words(names, texts, lowercase_names=["pgvector"]) == {"whisper"}


def test_out_edges_by_kind_and_their_inversion():
    idx = EntityIndex({"github copilot": ["copilot"], "vs code": ["vscode"], "tabby": ["tabby"]})
    rec = {
        "id": "continue",
        "name": "Continue",
        "description": "Open-source alternative to GitHub Copilot.",
        "features": ["integrates with VS Code and JetBrains", "self-hosted like Tabby"],
    }
    edges = out_edges(TOOLS, idx, rec, "continue")
    assert edges == {"integrates": ["vscode"], "mention": ["copilot", "tabby"]}
    # a record never points at itself, and chunks point from their document
    own = out_edges(
        TOOLS,
        EntityIndex({"continue": ["continue"]}),
        rec | {"description": "Continue is"},
        "continue",
    )
    assert own == {}
    inv = invert({"continue": edges, "aider": {"mention": ["copilot"]}})
    assert inv["copilot"] == {"mention": ["continue", "aider"]}
    assert inv["vscode"] == {"integrates": ["continue"]}
    assert merge_edges({"mention": ["a"]}, {"mention": ["b", "a"], "similar": []}) == {
        "mention": ["a", "b"]
    }
