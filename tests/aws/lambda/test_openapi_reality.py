"""The OpenAPI document (GET /openapi.json) against reality: the template's HTTP API routes and
path parameter names, the security schemes AuthMode turns on, and real answers of the handler
(a /search 200 and the 422s of /search and /sync) validated against the documented schemas."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from cfnlint.decode import cfn_yaml
from jsonschema import Draft202012Validator
from support.lambdas import FUNCTION_IDS, load_event, load_function
from support.template import TEMPLATE, plain

from agentic_search_cli.local_server import LocalContext


def _call(handlers: dict[str, Any], event: dict[str, Any]) -> tuple[int, Any]:
    ctx = LocalContext(
        function_name=FUNCTION_IDS["search_api"],
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:search_api",
        aws_request_id="openapi-reality",
    )
    out = handlers["search_api"].handler(event, ctx)
    return out["statusCode"], json.loads(out["body"])


@pytest.fixture(scope="module")
def doc(handlers) -> dict[str, Any]:
    status, body = _call(handlers, load_event("search_api/get_openapi.json"))
    assert status == 200
    return body


@pytest.fixture(scope="module")
def template_routes() -> set[tuple[str, str]]:
    """The REST routes the OpenAPI document describes: every HttpApi route of the template
    but the $default one and McpFunction's /mcp (JSON-RPC: MCP's tools/list describes it)."""
    template = plain(cfn_yaml.load(str(TEMPLATE)))
    return {
        (e["Properties"]["Method"].lower(), e["Properties"]["Path"])
        for name, r in template["Resources"].items()
        if r["Type"] == "AWS::Serverless::Function" and name != "McpFunction"
        for e in (r["Properties"].get("Events") or {}).values()
        if e["Type"] == "HttpApi" and "Path" in e["Properties"]  # not the $default route
    }


def _validator(doc: dict[str, Any], path: str, method: str, status: int) -> Draft202012Validator:
    """A validator of the documented JSON body of ``method path`` answering ``status``."""
    response = doc["paths"][path][method]["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    return Draft202012Validator({**schema, "components": doc["components"]})


def _errors(validator: Draft202012Validator, body: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(body)
    ]


def test_the_documents_routes_are_the_templates_with_the_same_parameter_names(doc, template_routes):
    documented = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    assert documented == template_routes
    for path, ops in doc["paths"].items():
        in_path = set(re.findall(r"{(\w+)}", path))
        for op in ops.values():
            params = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert params == in_path, path


def test_security_schemes_are_iam_sigv4_and_jwt_bearer(doc):
    schemes = doc["components"]["securitySchemes"]
    assert schemes["sigv4"] == {
        **schemes["sigv4"],
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "x-amazon-apigateway-authtype": "awsSigv4",
    }
    assert schemes["jwt"]["type"] == "http" and schemes["jwt"]["scheme"] == "bearer"
    assert schemes["jwt"]["bearerFormat"] == "JWT"
    assert doc["security"] == [{"sigv4": []}, {"jwt": []}]


def test_a_real_search_200_is_the_documented_body(doc, handlers, wired_runtime):
    validator = _validator(doc, "/search", "post", 200)
    event = load_event("search_api/post_search.json")
    status, body = _call(handlers, event)
    assert status == 200 and body["candidates"]
    assert _errors(validator, body) == []
    for query in ("cursor vs windsurf", "open source self-hosted vector database under $50"):
        event = copy.deepcopy(event)
        event["body"] = json.dumps({"query": query, "limit": 10})
        status, body = _call(handlers, event)
        assert status == 200 and _errors(validator, body) == [], query
    # AND the schema is strict enough to fail: an unknown key, a missing one
    assert _errors(validator, {**body, "surprise": 1})
    assert _errors(validator, {k: v for k, v in body.items() if k != "plan"})


@pytest.mark.parametrize(
    "rel",
    [
        "search_api/post_search_invalid_limit.json",
        "search_api/post_search_unknown_field.json",
        "search_api/post_search_empty_query.json",
    ],
)
def test_a_real_search_422_is_the_documented_body(doc, handlers, wired_runtime, rel):
    status, body = _call(handlers, load_event(rel))
    assert status == 422
    assert _errors(_validator(doc, "/search", "post", 422), body) == []


def test_the_guards_422_and_the_sync_routes_422_are_the_documented_body(
    doc, handlers, wired_runtime
):
    event = copy.deepcopy(load_event("search_api/post_search.json"))
    event["body"] = "[1, 2]"  # JSON, not an object: refused before validation
    status, body = _call(handlers, event)
    assert status == 422 and _errors(_validator(doc, "/search", "post", 422), body) == []
    sync = copy.deepcopy(load_event("search_api/get_health.json"))
    sync["rawPath"] = sync["requestContext"]["http"]["path"] = "/sync/tool/cursor"
    sync["routeKey"] = "GET /sync/tool/{id}"
    sync["pathParameters"] = {"id": "cursor"}
    sync["rawQueryString"] = "domain=nope"
    sync["queryStringParameters"] = {"domain": "nope"}
    status, body = _call(handlers, sync)
    assert status == 422, body
    assert _errors(_validator(doc, "/sync/tool/{id}", "get", 422), body) == []
    assert body["detail"][0]["field"] == "domain"


def test_real_health_and_sync_status_200s_are_the_documented_bodies(doc, handlers, wired_runtime):
    status, body = _call(handlers, load_event("search_api/get_health.json"))
    assert status == 200 and _errors(_validator(doc, "/health", "get", 200), body) == []
    sync = copy.deepcopy(load_event("search_api/get_health.json"))
    sync["rawPath"] = sync["requestContext"]["http"]["path"] = "/sync/status"
    sync["routeKey"] = "GET /sync/status"
    status, body = _call(handlers, sync)
    assert status == 200, body
    assert _errors(_validator(doc, "/sync/status", "get", 200), body) == []


def test_every_route_answers_another_method_with_405_and_allow(handlers, template_routes):
    # issue 25 finding 10: POST /sync/status and GET /sync/retry-all were 404 "no route";
    # only /search, /health and /openapi.json answered 405 with Allow
    from agentic_search_cli.local_events import http_api_event

    # SyncApi deploys the same handler as SearchApi (functions/sync_api/app.py)
    assert load_function("sync_api").handler is handlers["search_api"].handler
    fn = "search_api"
    ctx = LocalContext(function_name=FUNCTION_IDS[fn], aws_request_id="methods")
    for method, path in sorted(template_routes):
        concrete = re.sub(r"{\w+}", "some-id", path)
        for other in {"GET", "POST", "PUT", "DELETE", "PATCH"} - {method.upper()}:
            body = b"{}" if other != "GET" else b""
            event = http_api_event(other, concrete, {"content-type": "application/json"}, body)
            out = handlers[fn].handler(event, ctx)
            where = f"{other} {concrete}"
            assert out["statusCode"] == 405, (where, out["body"])
            assert out["headers"]["Allow"] == method.upper(), where
            answer = json.loads(out["body"])
            assert answer["error"] == "MethodNotAllowed", where
            assert answer["message"] == f"{where}: use {method.upper()}"
    # a path no route serves is still a 404
    event = http_api_event("GET", "/sync/nothing", {}, b"")
    out = handlers[fn].handler(event, ctx)
    assert out["statusCode"] == 404 and "Allow" not in (out.get("headers") or {})
    # /mcp (any method, McpFunction): its own handler answers what is not a POST the same way
    ctx = LocalContext(function_name=FUNCTION_IDS["mcp_api"], aws_request_id="methods")
    for other in ("GET", "PUT", "DELETE", "PATCH"):
        event = http_api_event(other, "/mcp", {"content-type": "application/json"}, b"")
        out = handlers["mcp_api"].handler(event, ctx)
        assert (out["statusCode"], out["headers"]["Allow"]) == (405, "POST"), other
        assert json.loads(out["body"]) == {
            "error": "MethodNotAllowed",
            "message": f"{other} /mcp: use POST",
        }


FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (b"not json", 400, "InvalidJSON"),
        (b"query=free+editor", 400, "InvalidJSON"),
        (b'{"query": "free', 400, "InvalidJSON"),
        (b"[1,2]", 422, None),
        (b'"free editor"', 422, None),
    ],
)
def test_a_form_typed_body_is_read_as_json_like_application_json(handlers, body, status, error):
    # issue 25 finding 11: with curl -d's form type, '[1,2]' and 'not json' were 415 while a
    # truncated JSON object was 400; docs/explanation/reliability.md says the form type is read
    # as JSON
    from agentic_search_cli.local_events import http_api_event

    answers = []
    for headers in (FORM, {"content-type": "application/json"}):
        event = http_api_event("POST", "/search", headers, body)
        answers.append(_call(handlers, event))
    assert answers[0] == answers[1]  # the same answer as under application/json
    got_status, answer = answers[0]
    assert got_status == status, answer
    if error:
        assert answer["error"] == error and "not valid JSON" in answer["message"]
    else:
        assert answer["detail"] == [
            {"field": "body", "message": "must be a JSON object", "type": "dict_type"}
        ]
