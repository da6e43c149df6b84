"""The access-control model: the schema's access spec is validated, the caller's effective
access set is a stable hash, the policy admits exactly what the rule says, restricted classes
are refused by the query alone, and the cache keys of a domain without access are unchanged."""

from __future__ import annotations

import pytest
from support.access import access_yaml

from agentic_search.logic.access import AccessFilter, AccessPolicy
from agentic_search.logic.cache_keys import cache_key, plan_cache_key
from agentic_search.logic.filters import FilterError, validate_filters
from agentic_search.logic.schema import SchemaError, load_schema
from agentic_search.wire import Caller, Filter, IntentState
from agentic_search_cli.serve_access import ServeAccess, TokenTableError, load_tokens
from agentic_search_lambda.callers import caller_of, claim_values


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    return load_schema(access_yaml(tmp_path_factory.mktemp("acl") / "acl.yaml", "deny"))


@pytest.fixture(scope="module")
def public(tmp_path_factory):
    return load_schema(access_yaml(tmp_path_factory.mktemp("pub") / "pub.yaml", "public"))


def test_the_tools_schema_declares_no_access_and_keeps_its_fingerprint():
    tools = load_schema("tools")
    assert tools.access is None
    assert "access" not in tools.model_dump(exclude_none=True)
    # the fingerprint is over the content without an unset access: unchanged cache keys
    assert AccessPolicy.of(tools, Caller.of(["x"])).cache_part == {}


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ("access: {field: nope}", "access.field 'nope' is not defined"),
        ("access: {field: name}", "access.field 'name' must be a list field"),
        ("access: {field: platforms}", "must allow no filter operator"),
        ("access: {field: aliases, default: maybe}", "default"),
        (
            "access: {field: aliases, restricted: [{field: nope, values: [x], claim: c}]}",
            "access.restricted names unknown field 'nope'",
        ),
        (
            "access: {field: aliases, restricted: [{field: category, values: [x], claim: c}]}",
            "access.restricted value 'x' is not in the vocabulary of 'category'",
        ),
    ],
)
def test_an_inconsistent_access_spec_is_refused_naming_the_problem(tmp_path, block, reason):
    from support.access import TOOLS_YAML

    path = tmp_path / "bad.yaml"
    path.write_text(TOOLS_YAML.read_text().replace("name: tools", "name: bad", 1) + block + "\n")
    with pytest.raises(SchemaError) as exc:
        load_schema(path)
    assert reason in str(exc.value)


def test_the_access_set_is_the_sorted_principals_hash():
    a = Caller.of(["eng", "alice", "eng"])
    b = Caller.of(["alice", "eng"])
    assert a.principals == ["alice", "eng"]
    assert a.key == b.key and len(a.key) == 32
    assert Caller.of(["alice"]).key != a.key
    assert Caller().key != a.key  # anonymous is its own set


def test_cache_keys_carry_the_access_set_only_when_given():
    base = {
        "limit": 10,
        "rounds": None,
        "domain": "tools",
        "schema_fingerprint": "f",
        "catalog_version": 1,
    }
    assert cache_key("q", **base) == cache_key("q", **base, access={})
    one = cache_key("q", **base, access={"access": Caller.of(["a"]).key})
    two = cache_key("q", **base, access={"access": Caller.of(["b"]).key})
    assert len({cache_key("q", **base), one, two}) == 3
    plan = {k: v for k, v in base.items() if k != "rounds"} | {"planner": "llm:m"}
    assert plan_cache_key("q", **plan) == plan_cache_key("q", **plan, access={})
    assert plan_cache_key("q", **plan) != plan_cache_key("q", **plan, access={"access": "x"})


@pytest.mark.parametrize(
    ("payload", "principals", "deny", "public_"),
    [
        ({"acl": ["a"]}, ["a"], True, True),
        ({"acl": ["a"]}, ["b"], False, False),
        ({"acl": []}, ["a"], False, True),
        ({}, [], False, True),
        ({"acl": ["a"]}, [], False, False),
        ({"acl": ["a"]}, ["admin"], True, True),
        ({"acl": ["a"], "sensitivity": "restricted"}, ["a"], False, False),
        ({"acl": ["a"], "sensitivity": "restricted"}, ["a", "clearance"], True, True),
        ({"sensitivity": "restricted"}, ["admin"], True, True),
    ],
)
def test_the_policy_admits_by_the_rule(schema, public, payload, principals, deny, public_):
    caller = Caller.of(principals)
    assert AccessPolicy.of(schema, caller).admits(payload) is deny
    assert AccessPolicy.of(public, caller).admits(payload) is public_


def test_the_hard_filter_is_made_in_process_and_a_parsed_one_is_validated(schema):
    rule = AccessPolicy.of(schema, Caller.of(["a"])).hard_filter()
    assert isinstance(rule, AccessFilter) and rule.value == ["a"]
    assert rule.denied == [("sensitivity", ["restricted"])]
    validate_filters(schema, [rule])  # compiled apart: not the allowlist's
    # the same condition from a request body is a plain Filter: the allowlist refuses it
    with pytest.raises(FilterError):
        validate_filters(
            schema, [Filter.model_validate(rule.model_dump(include={"field", "operator", "value"}))]
        )
    assert AccessPolicy.of(schema, Caller.of(["admin"])).hard_filter() is None
    assert AccessPolicy.of(load_schema("tools"), Caller()).hard_filter() is None


def test_a_restricted_class_asked_without_the_claim_is_refused_by_the_query_alone(schema):
    intent = IntentState(query="restricted tools", normalized_query="restricted tools")
    policy = AccessPolicy.of(schema, Caller.of(["a"]))
    reasons = policy.refusals(schema, intent, [], ["restricted", "tools"])
    assert reasons and "not permitted" in reasons[0] and "'clearance'" in reasons[0]
    added = [Filter(field="sensitivity", operator="eq", value="restricted")]
    assert policy.refusals(schema, intent, added, ["tools"]) == reasons
    assert policy.refusals(schema, intent, [], ["free", "tools"]) == []
    cleared = AccessPolicy.of(schema, Caller.of(["a", "clearance"]))
    assert cleared.refusals(schema, intent, added, ["restricted"]) == []


@pytest.mark.parametrize(
    ("claims", "principals"),
    [
        ({"sub": "u-1", "groups": "[eng ops]"}, ["eng", "ops", "u-1"]),
        ({"sub": "u-1", "groups": ["eng", "ops"], "tenant": "acme"}, ["acme", "eng", "ops", "u-1"]),
        ({"email": "x@example.com"}, []),
        ({}, []),
    ],
)
def test_jwt_claims_map_to_principals(claims, principals):
    event = {"requestContext": {"authorizer": {"jwt": {"claims": claims, "scopes": None}}}}
    assert caller_of(event, ["sub", "groups", "tenant"]).principals == principals


def test_principals_come_only_from_the_authorizer():
    event = {"headers": {"x-agentic-search-principals": '["admin"]'}, "body": '{"caller": 1}'}
    assert caller_of(event, ["sub"]).principals == []
    lam = {"requestContext": {"authorizer": {"lambda": {"principals": ["a", "b"]}}}}
    assert caller_of(lam, ["sub"]).principals == ["a", "b"]
    assert claim_values("[a, b]") == ["a", "b"] and claim_values(7) == ["7"]


def test_serve_trusts_its_token_table_and_the_cli_header_only_on_loopback_with_its_token():
    access = ServeAccess({"t" * 20: ["eng"]}, bound_loopback=True, local_token="local-secret")
    assert access.principals({"Authorization": "Bearer " + "t" * 20}, "10.0.0.9") == ["eng"]
    assert access.principals({"Authorization": "Bearer wrong"}, "127.0.0.1") is None
    header = {"x-agentic-search-principals": '["admin"]'}
    assert access.principals(header, "127.0.0.1") == []  # no token: not the local CLI
    with_token = {**header, "x-agentic-search-token": "local-secret"}
    assert access.principals(with_token, "127.0.0.1") == ["admin"]
    assert access.principals(with_token, "10.0.0.9") == []
    exposed = ServeAccess({}, bound_loopback=False, local_token="local-secret")
    assert exposed.principals(with_token, "127.0.0.1") == []


def test_a_bad_token_table_is_refused_naming_the_file(tmp_path):
    good = tmp_path / "tokens.yaml"
    good.write_text("abcdefghijklmnopqrst: [eng, alice]\n")
    assert load_tokens(good) == {"abcdefghijklmnopqrst": ["eng", "alice"]}
    short = tmp_path / "short.yaml"
    short.write_text("abc: [eng]\n")
    with pytest.raises(TokenTableError, match=r"short\.yaml"):
        load_tokens(short)
