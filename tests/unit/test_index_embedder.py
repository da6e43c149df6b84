"""Which local model a command uses when it names none (issue 47, item 4): the one the Edge
shard's identity file records, with its quantization and dimension for EmbeddingGemma; a
configured model, an API embedder or a missing file leave the settings as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.wiring import index_embedder_settings

SCHEMA = load_schema("tools")


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("LOCAL_EMBEDDING_MODEL", "EMBEDDING_PROVIDER", "EMBEDDING_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "home"


def _record(home: Path, **identity) -> None:
    (home / "edge").mkdir(parents=True, exist_ok=True)
    (home / "edge" / "tools.embedder.json").write_text(json.dumps(identity))


@pytest.mark.parametrize(
    ("identity", "model"),
    [
        ({"model": "multilingual-e5-small-q4", "dim": 384}, "multilingual-e5-small-q4"),
        ({"model": "all-MiniLM-L6-v2-int8", "dim": 384}, "all-MiniLM-L6-v2-int8"),
        ({"model": "embeddinggemma-300m-int8-256d", "dim": 256}, "embeddinggemma-300m-int8-256d"),
        ({"model": "embeddinggemma-300m", "dim": 768}, "embeddinggemma-300m"),
    ],
)
def test_a_command_naming_no_model_uses_the_indexs(home, identity, model):
    _record(home, **identity)
    settings = index_embedder_settings(Settings(agentic_search_home=home), SCHEMA)
    assert settings.embedder_model == model


def test_a_configured_model_stays_and_is_refused_later(home):
    _record(home, model="multilingual-e5-small-q4", dim=384)
    named = Settings(agentic_search_home=home, local_embedding_model="minilm")
    assert index_embedder_settings(named, SCHEMA) is named


def test_an_api_embedder_or_no_index_leaves_the_settings(home):
    api = Settings(agentic_search_home=home, embedding_model="text-embedding-3-small")
    _record(home, model="multilingual-e5-small-q4", dim=384)
    assert index_embedder_settings(api, SCHEMA) is api
    (home / "edge" / "tools.embedder.json").unlink()
    plain = Settings(agentic_search_home=home)
    assert index_embedder_settings(plain, SCHEMA) is plain
