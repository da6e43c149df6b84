"""X-Ray patches botocore when a function first imports it, not at cold start.

In a fresh interpreter with Lambda's environment (``LAMBDA_TASK_ROOT`` set, tracing on), a light
handler's import leaves botocore's client machinery unimported; the first boto3 client patches
it (the X-Ray SDK marks ``botocore.client._xray_enabled`` when it wraps the API calls); with
tracing disabled nothing is patched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import FUNCTIONS

PROBE = """
import json, sys
import app
at_import = "botocore.client" in sys.modules
import boto3
boto3.client("dynamodb", region_name="us-east-1")
import botocore.client
patched = hasattr(botocore.client, "_xray_enabled")  # set by the X-Ray SDK's patch
print(json.dumps({"at_import": at_import, "patched": patched}))
"""


def probe(function: str, home: Path, **env: str) -> dict:
    base = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(FUNCTIONS / function), *sys.path]),
        "LAMBDA_TASK_ROOT": str(FUNCTIONS / function),
        "AWS_LAMBDA_FUNCTION_NAME": "probe",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_SERVICE_NAME": "agentic-search",
        "AGENTIC_SEARCH_HOME": str(home),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("function", ["grade_round", "cache_check"])
def test_botocore_is_patched_on_first_use_not_at_import(function, tmp_path):
    assert probe(function, tmp_path) == {"at_import": False, "patched": True}


def test_nothing_is_patched_when_tracing_is_disabled(tmp_path):
    assert probe("grade_round", tmp_path, POWERTOOLS_TRACE_DISABLED="1") == {
        "at_import": False,
        "patched": False,
    }
