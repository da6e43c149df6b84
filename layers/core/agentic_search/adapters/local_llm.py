"""``LLM_PROVIDER=local``: a GGUF model run by llama.cpp (``xllamacpp``) in one
OpenAI-compatible server process on loopback, started and stopped by the project.

Why a server process and not llama.cpp in-process: the OpenAI-compatible route lets the
existing :class:`~agentic_search.adapters.openai_chat.OpenAIChatClient` (JSON-schema
structured output, timeouts, fallbacks) be reused unchanged, a call abandoned at its deadline
does not hold the search process's threads, and llama.cpp's OpenMP threads stay out of the
process that runs ONNX and Qdrant. The child runs with ``OMP_WAIT_POLICY=PASSIVE`` (on shared
CPUs spinning OpenMP threads collapse generation to a few tokens/s).

One server per process and model file (:func:`local_server`), stopped at exit. Readiness is
``GET /health`` answering 200 after the model loaded. Run as a module it is the child::

    python -m agentic_search.adapters.local_llm --model FILE.gguf --port 18000
"""

from __future__ import annotations

import argparse
import atexit
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from agentic_search.logic.llm_budget import LLMFallback

#: Context window per slot (the intent prompt with the domain's vocabularies and the answer
#: fit well within it) and slots: one for the intent prompt and one for the plan prompt, so
#: each system prompt's KV cache is reused from call to call (prompt processing on a CPU is
#: the larger part of a call's time).
N_CTX_PER_SLOT = 4096
N_SLOTS = 2


class LocalLLMError(RuntimeError):
    """The local model cannot be served: no runtime, no file, or it did not become ready."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalLLMServer:
    """One xllamacpp server child on ``127.0.0.1:<port>`` for ``model`` (a GGUF file).

    :meth:`start` spawns it and waits for ``/health``; :meth:`stop` terminates it.
    ``base_url`` is the OpenAI-compatible root (``http://127.0.0.1:<port>/v1``).
    """

    def __init__(self, model: Path, *, threads: int | None = None) -> None:
        self.model = Path(model)
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self.port = 0
        #: Whether the intent system prompt was sent once (its KV cache kept by llama.cpp).
        self.warmed = False
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, load_timeout_s: float) -> LocalLLMServer:
        """Spawn the server and wait until it answers ``/health`` with 200.

        Raises:
            LocalLLMError: no GGUF at ``model``, ``xllamacpp`` not installed, the child exited,
                or it was not ready within ``load_timeout_s``.
        """
        if not self.model.is_file():
            raise LocalLLMError(
                f"no GGUF model at {self.model}: run `make llm` or set LLM_GGUF_PATH"
            )
        import importlib.util

        if importlib.util.find_spec("xllamacpp") is None:
            raise LocalLLMError("LLM_PROVIDER=local needs xllamacpp: run `make llm`")
        self.port = _free_port()
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        cmd = [sys.executable, "-m", "agentic_search.adapters.local_llm"]
        cmd += ["--model", str(self.model), "--port", str(self.port)]
        cmd += ["--threads", str(self.threads), "--parent", str(os.getpid())]
        self.proc = subprocess.Popen(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + load_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(
                    errors="replace"
                )
                raise LocalLLMError(
                    f"local LLM server exited ({self.proc.returncode}): {err.strip()[-300:]}"
                )
            if self.ready():
                # Drain stderr so a chatty server never blocks on a full pipe.
                threading.Thread(target=self._drain, daemon=True).start()
                return self
            time.sleep(0.25)
        self.stop()
        raise LocalLLMError(f"local LLM server not ready within {load_timeout_s:.0f} s")

    def _drain(self) -> None:
        if self.proc is not None and self.proc.stderr is not None:
            for _ in self.proc.stderr:
                pass

    def ready(self) -> bool:
        """``GET /health`` answers 200 (the model is loaded)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        """Terminate the child (kill after 5 s)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


_SERVERS: dict[Path, LocalLLMServer] = {}
_LOCK = threading.Lock()


def local_server(model: Path, load_timeout_s: float) -> LocalLLMServer:
    """The process's server for ``model``, started on first use and stopped at exit.

    Raises:
        LLMFallback: (kind ``error``, not transient) when it cannot be started, so the search
            runs on the rules and the response says why.
    """
    key = Path(model).resolve()
    with _LOCK:
        server = _SERVERS.get(key)
        if server is not None and server.proc is not None and server.proc.poll() is None:
            return server
        server = LocalLLMServer(key)
        try:
            server.start(load_timeout_s)
        except LocalLLMError as exc:
            raise LLMFallback("error", str(exc)) from exc
        _SERVERS[key] = server
        atexit.register(server.stop)
        return server


def _serve(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="xllamacpp OpenAI-compatible server on loopback")
    ap.add_argument("--model", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--parent", type=int, default=0, help="exit when this process is gone")
    args = ap.parse_args(argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.port = args.port
    params.n_ctx = N_CTX_PER_SLOT * N_SLOTS
    params.n_parallel = N_SLOTS
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    server = xllamacpp.Server(params)  # noqa: F841 - serves until the process ends
    wait_for_parent_exit(args.parent)
    os._exit(0)


def wait_for_parent_exit(parent: int, poll_s: float = 1.0) -> None:
    """Return once the process ``parent`` is no longer this process's parent (it exited or
    was killed: the child was re-parented), polling every ``poll_s`` seconds; never, for 0.

    ``stop`` and the atexit hook end the child when its parent exits normally; a parent
    killed by a signal runs neither, and the child (1-2 GB of weights, CPU threads) would
    serve nobody until the machine restarts."""
    while True:
        time.sleep(poll_s)
        if parent and os.getppid() != parent:
            return


if __name__ == "__main__":
    _serve()
