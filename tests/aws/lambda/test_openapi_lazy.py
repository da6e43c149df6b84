"""The OpenAPI document is built on the first ``GET /openapi.json``, not at cold start.

In a fresh interpreter with Lambda's environment, importing SearchApi's or SyncApi's handler
leaves Powertools' OpenAPI models (``aws_lambda_powertools.event_handler.openapi.models``)
unimported; the first ``GET /openapi.json`` imports them and answers the document with its
security schemes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.paths import FUNCTIONS, REPO

MODELS = "aws_lambda_powertools.event_handler.openapi.models"

PROBE = f"""
import json, sys
import app
at_import = {MODELS!r} in sys.modules
from agentic_search_cli.local_server import LocalContext
context = LocalContext(
    function_name="probe",
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:probe",
    aws_request_id="openapi-lazy",
)
event = json.load(open(sys.argv[1]))
out = app.handler(event, context)
doc = json.loads(out["body"])
print(json.dumps({{
    "at_import": at_import,
    "after": {MODELS!r} in sys.modules,
    "status": out["statusCode"],
    "schemes": sorted(doc["components"]["securitySchemes"]),
    "security": doc.get("security"),
}}))
"""


@pytest.mark.parametrize("function", ["search_api", "sync_api"])
def test_openapi_models_load_on_the_first_document_request_not_at_import(function, tmp_path):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(FUNCTIONS / function), *sys.path]),
        "LAMBDA_TASK_ROOT": str(FUNCTIONS / function),
        "AWS_LAMBDA_FUNCTION_NAME": "probe",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_SERVICE_NAME": "agentic-search",
        "POWERTOOLS_TRACE_DISABLED": "1",
        "AGENTIC_SEARCH_HOME": str(tmp_path / "home"),
    }
    event = REPO / "events" / "search_api" / "get_openapi.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(event)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {
        "at_import": False,
        "after": True,
        "status": 200,
        "schemes": ["jwt", "sigv4"],
        "security": [{"sigv4": []}, {"jwt": []}],
    }
