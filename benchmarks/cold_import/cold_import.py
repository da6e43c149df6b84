"""Cold import of every Lambda handler as the runtime does it: the built artifacts of `sam build`
(.aws-sam/build: the function folder, then its layers' python/ folders), python3.12, no .pyc
written (PYTHONDONTWRITEBYTECODE: /opt and /var/task are read-only in Lambda, so only the
layers' precompiled .pyc help), a Lambda-like environment (LAMBDA_TASK_ROOT = the function's
folder, so Powertools Tracer is on and the X-Ray SDK in its Lambda mode), one fresh
process per run. CPU is user + sys of the child (getrusage), median of the runs after one
warm-up; the interpreter's own start (`-c pass`) is measured the same way and shown apart.

Usage (from the repository root, after `make validate`):
    python benchmarks/cold_import/cold_import.py [--python .venv-py312/bin/python] [--runs 5]

The interpreter needs boto3 (the Lambda runtime provides it; the layers leave it out):
    python3.12 -m venv .venv-py312 && .venv-py312/bin/pip install boto3
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import yaml  # noqa: E402
from built_sizes import _CfnLoader, function_layers  # noqa: E402

LAMBDA_ENV = {
    "AWS_LAMBDA_FUNCTION_NAME": "cold-import",
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    "_HANDLER": "app.handler",
    "POWERTOOLS_SERVICE_NAME": "agentic-search",
    "POWERTOOLS_METRICS_NAMESPACE": "AgenticSearch",
    "POWERTOOLS_LOG_LEVEL": "INFO",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
    "QDRANT_URL": "http://127.0.0.1:6333",
    "MAX_ROUNDS": "3",
    "AGENTIC_SEARCH_HOME": "/tmp/agentic-search-cold-import",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:s",
    "MAP_MAX_CONCURRENCY": "8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONNOUSERSITE": "1",
}
EMBEDDING_TARGET_S, LIGHT_TARGET_S = 0.5, 0.4


def child_cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``cmd``.

    Raises:
        RuntimeError: when it exits non-zero.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{cmd} failed: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def median_of(cmd: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median (CPU, wall) seconds over ``runs`` runs after one warm-up."""
    child_cpu(cmd, env)
    samples = [child_cpu(cmd, env) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main(argv: list[str] | None = None) -> int:
    """Print a markdown table, one row per function; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(ROOT / ".venv-py312" / "bin" / "python"))
    parser.add_argument("--build-dir", default=str(ROOT / ".aws-sam" / "build"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    build = Path(args.build_dir)
    template = yaml.load((ROOT / "template.yaml").read_text(encoding="utf-8"), Loader=_CfnLoader)
    base = {"PATH": os.environ.get("PATH", ""), **LAMBDA_ENV}
    start_cpu, start_wall = median_of([args.python, "-c", "pass"], base, args.runs)
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()}, {args.runs} runs")
    print(f"interpreter start (`-c pass`): {start_cpu:.3f} s CPU, {start_wall:.3f} s wall\n")
    print("| function | layers | import CPU s (median) | wall s | target |")
    print("|---|---|---|---|---|")
    for name, layers in sorted(function_layers(template).items()):
        path = [build / name] + [build / layer / "python" for layer in layers]
        # LAMBDA_TASK_ROOT (/var/task in Lambda): the X-Ray SDK and Powertools' Tracer take the
        # Lambda path only where it is set (else the SDK builds a botocore X-Ray client for its
        # centralized sampler, and the Tracer disables itself, both unlike a real cold start).
        env = {
            **base,
            "PYTHONPATH": os.pathsep.join(str(p) for p in path),
            "LAMBDA_TASK_ROOT": str(build / name),
        }
        cpu, wall = median_of([args.python, "-c", "import app"], env, args.runs)
        target = EMBEDDING_TARGET_S if "EmbedLayer" in layers else LIGHT_TARGET_S
        verdict = "within" if cpu <= target else "over"
        print(
            f"| {name} | {' + '.join(layers)} | {cpu:.3f} | {wall:.3f} | ≤ {target} s ({verdict}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
