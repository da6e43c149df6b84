"""A SigV4 caller's principals: its IAM identity's ARN and the values of its tags, read from
IAM (moto's, through a real boto3 client) and kept for a while; never more when IAM fails."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from support.aws import fake_credentials

from agentic_search_lambda.callers import caller_of
from agentic_search_lambda.iam_principals import IamPrincipals, identity_of

ACCOUNT = "123456789012"  # moto's account
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/search-readers"
SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/search-readers/alice"
TRUST = '{"Version":"2012-10-17","Statement":[]}'


@pytest.fixture()
def iam(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    fake_credentials(monkeypatch)
    with mock_aws():
        client = boto3.client("iam")
        client.create_role(
            RoleName="search-readers",
            AssumeRolePolicyDocument=TRUST,
            Tags=[
                {"Key": "groups", "Value": "eng ops"},
                {"Key": "tenant", "Value": "acme"},
                {"Key": "cost-center", "Value": "42"},
            ],
        )
        client.create_user(
            UserName="bob", Path="/people/", Tags=[{"Key": "groups", "Value": "finance"}]
        )
        yield client


@pytest.mark.parametrize(
    ("arn", "expected"),
    [
        (SESSION, ("role", "search-readers", ROLE_ARN)),
        (ROLE_ARN, ("role", "search-readers", ROLE_ARN)),
        (
            f"arn:aws:iam::{ACCOUNT}:user/people/bob",
            ("user", "bob", f"arn:aws:iam::{ACCOUNT}:user/people/bob"),
        ),
        (
            "arn:aws-cn:sts::123456789012:assumed-role/r/s",
            ("role", "r", "arn:aws-cn:iam::123456789012:role/r"),
        ),
        (f"arn:aws:iam::{ACCOUNT}:root", None),
        ("not an arn", None),
    ],
)
def test_an_iam_caller_is_its_role_or_user(arn: str, expected: Any) -> None:
    assert identity_of(arn) == expected


def test_a_role_session_has_the_role_arn_and_the_named_tags_values(iam) -> None:
    principals = IamPrincipals(["groups", "tenant"], client=iam)
    # the tags not named (cost-center) are not principals
    assert principals(SESSION) == [ROLE_ARN, "eng", "ops", "acme"]
    user = IamPrincipals(["groups", "tenant"], client=iam)
    bob = f"arn:aws:iam::{ACCOUNT}:user/people/bob"
    assert user(bob) == [bob, "finance"]


def test_tags_are_kept_for_the_ttl_then_read_again(iam) -> None:
    now = [0.0]
    principals = IamPrincipals(["groups"], client=iam, ttl_s=300, clock=lambda: now[0])
    assert principals(SESSION) == [ROLE_ARN, "eng", "ops"]
    iam.tag_role(RoleName="search-readers", Tags=[{"Key": "groups", "Value": "eng"}])
    now[0] = 299.0
    assert principals(SESSION) == [ROLE_ARN, "eng", "ops"]  # kept
    now[0] = 301.0
    assert principals(SESSION) == [ROLE_ARN, "eng"]  # a removed group is gone after the TTL


def test_unreadable_tags_leave_the_arn_alone_and_are_asked_again(iam) -> None:
    principals = IamPrincipals(["groups"], client=iam)
    missing = f"arn:aws:sts::{ACCOUNT}:assumed-role/no-such-role/s"
    assert principals(missing) == [f"arn:aws:iam::{ACCOUNT}:role/no-such-role"]
    iam.create_role(
        RoleName="no-such-role",
        AssumeRolePolicyDocument=TRUST,
        Tags=[{"Key": "groups", "Value": "late"}],
    )
    assert principals(missing) == [f"arn:aws:iam::{ACCOUNT}:role/no-such-role", "late"]


def test_without_tag_keys_iam_is_not_asked() -> None:
    class Unreachable:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"IAM asked: {name}")

    assert IamPrincipals([], client=Unreachable())(SESSION) == [ROLE_ARN]


def test_the_event_names_the_caller_only_through_the_iam_authorizer(iam) -> None:
    principals = IamPrincipals(["groups", "tenant"], client=iam)
    event = {"requestContext": {"authorizer": {"iam": {"userArn": SESSION}}}}
    assert caller_of(event, ["sub"], principals).principals == sorted(
        [ROLE_ARN, "eng", "ops", "acme"]
    )
    # without a lookup the ARN as signed is the one principal
    assert caller_of(event, ["sub"]).principals == [SESSION]
    # a header or body that claims an ARN is never read
    forged = {"headers": {"x-user-arn": SESSION}, "body": SESSION, "requestContext": {}}
    assert caller_of(forged, ["sub"], principals).principals == []
