"""Operate a deployed stack (template.yaml): seed its catalog, smoke-test its search API, delete it.

    python scripts/stack.py seed   --stack-name S [--jsonl FILE] [--via table|export]
    python scripts/stack.py smoke  --stack-name S [--query Q] [--expect ID,ID] [--top N]
    python scripts/stack.py delete --stack-name S

``seed`` loads the bundled catalog (or any JSONL of records with an ``id``) into the stack:
``--via table`` (default) writes the records to CatalogTable, whose stream drives CatalogSync
(the sync path embeds and indexes each record, as for any catalog edit); ``--via export`` uploads
the JSONL to CatalogExportBucket and starts the ReindexStateMachine on it (the Distributed Map
reindex: one pass for a large catalog). ``smoke`` sends a SigV4-signed ``POST {SearchApiUrl}search``
(botocore's SigV4Auth, service execute-api: the API's IAM auth) and checks that the expected ids
are among the first ``--top`` candidates. ``delete`` empties CatalogExportBucket and SnapshotBucket
(every object version: CloudFormation cannot delete a bucket that holds objects; a stack from
before SnapshotBucket has only the first) and deletes the stack, waiting
for it to go; the retained CatalogTable and SyncStatusTable stay (DeletionPolicy Retain).

Region: ``--region``, else ``AWS_REGION``, else the region of samconfig.toml's deploy parameters
(the one ``make deploy`` deployed to), else boto3's own (``AWS_DEFAULT_REGION``, the profile).
Credentials and endpoint are boto3's own (AWS_PROFILE, AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL).

Every failure is one line on stderr. Exit status: 0 done; 1 a check failed (the smoke search
answered, but not with the expected ids or not with HTTP 200; the stack deletion failed); 2 the
script could not do its work (no region or credentials, AWS or the API could not be reached or
refused a call, a stack, output or file is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
import urllib.error
import urllib.request
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    WaiterError,
)

DEFAULT_QUERY = "compare Pinecone and Qdrant"
DEFAULT_EXPECT = "pinecone,qdrant"
SAMCONFIG = Path(__file__).resolve().parent.parent / "samconfig.toml"


class StackError(RuntimeError):
    """The script cannot do its work: a stack, one of its outputs or an input file is missing,
    or AWS (or the stack's API) cannot be reached."""


def samconfig_region(path: Path = SAMCONFIG) -> str | None:
    """The ``region`` of samconfig.toml's ``[default.deploy.parameters]`` (else of
    ``[default.global.parameters]``), or None when the file or the key is missing.

    Raises:
        StackError: when the file is not valid TOML.
    """
    if not path.is_file():
        return None
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise StackError(f"{path.name}: {exc}") from None
    default = config.get("default", {})
    for command in ("deploy", "global"):
        region = default.get(command, {}).get("parameters", {}).get("region")
        if region:
            return str(region)
    return None


def make_session(region: str | None) -> boto3.Session:
    """A boto3 session in ``region``, else ``AWS_REGION``, else samconfig.toml's region, else
    boto3's own default (``AWS_DEFAULT_REGION``, the profile's).

    Raises:
        StackError: when none names a region, or the profile does not exist.
    """
    region = region or os.environ.get("AWS_REGION") or samconfig_region()
    try:
        session = boto3.Session(region_name=region)
    except BotoCoreError as exc:  # ProfileNotFound
        raise StackError(str(exc)) from None
    if not session.region_name:
        raise StackError(
            "no AWS region: pass --region, set AWS_REGION, or set region in samconfig.toml"
        )
    return session


def stack_outputs(session: boto3.Session, stack_name: str) -> dict[str, str]:
    """The stack's outputs, key -> value.

    Raises:
        StackError: when the stack does not exist.
    """
    cfn = session.client("cloudformation")
    try:
        [stack] = cfn.describe_stacks(StackName=stack_name)["Stacks"]
    except ClientError as exc:
        message = exc.response["Error"].get("Message") or str(exc)
        raise StackError(f"stack {stack_name!r} in {session.region_name}: {message}") from None
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def output(outputs: dict[str, str], key: str) -> str:
    """One output's value. Raises: StackError when the stack has no such output."""
    if key not in outputs:
        raise StackError(f"the stack has no output {key} (outputs: {sorted(outputs)})")
    return outputs[key]


def read_records(path: Path | None) -> tuple[str, list[dict[str, Any]]]:
    """(JSONL text, records) of ``path``, or of the bundled catalog; numbers as Decimal (what
    DynamoDB stores).

    Raises:
        StackError: when the file is missing or a record has no ``id``.
    """
    if path is None:
        text = (resources.files("agentic_search") / "data/tools.jsonl").read_text("utf-8")
    elif path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise StackError(f"{path}: invalid UTF-8 at byte {exc.start}") from None
    else:
        raise StackError(f"no file {path}")
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line, parse_float=Decimal))
            except json.JSONDecodeError as exc:
                raise StackError(f"{path} line {number}: malformed JSON: {exc.msg}") from None
    missing = [i for i, r in enumerate(records, 1) if not r.get("id")]
    if missing:
        raise StackError(f"records without an id at lines {missing[:5]}")
    return text, records


def seed_table(session: boto3.Session, table: str, records: list[dict[str, Any]]) -> int:
    """Write ``records`` to the DynamoDB ``table`` (batched); returns how many."""
    with session.resource("dynamodb").Table(table).batch_writer(overwrite_by_pkeys=["id"]) as w:
        for record in records:
            w.put_item(Item=record)
    return len(records)


def seed_export(
    session: boto3.Session, bucket: str, state_machine: str, text: str, key: str
) -> str:
    """Upload the JSONL ``text`` to ``s3://bucket/key`` and start the reindex on it; returns
    the execution ARN."""
    session.client("s3").put_object(Bucket=bucket, Key=key, Body=text.encode("utf-8"))
    started = session.client("stepfunctions").start_execution(
        stateMachineArn=state_machine, input=json.dumps({"bucket": bucket, "key": key})
    )
    return started["executionArn"]


def signed_search(
    session: boto3.Session, url: str, body: dict[str, Any], timeout_s: float = 30.0
) -> tuple[int, dict[str, Any]]:
    """POST ``body`` to ``{url}search`` signed with SigV4 (execute-api); returns (status, JSON
    body; a body that is not a JSON object as ``{"message": <its first 200 characters>}``).

    Raises:
        StackError: when the API cannot be reached (connection refused, no such host, timeout).
    """
    data = json.dumps(body).encode("utf-8")
    request = AWSRequest(
        method="POST",
        url=url.rstrip("/") + "/search",
        data=data,
        headers={"content-type": "application/json"},
    )
    credentials = session.get_credentials()
    if credentials is None:
        raise NoCredentialsError()
    credentials = credentials.get_frozen_credentials()
    SigV4Auth(credentials, "execute-api", session.region_name).add_auth(request)
    prepared = urllib.request.Request(
        request.url, data=data, headers=dict(request.headers.items()), method="POST"
    )
    try:
        with urllib.request.urlopen(prepared, timeout=timeout_s) as resp:
            return resp.status, _json_body(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, _json_body(exc.read())
    except (urllib.error.URLError, OSError) as exc:  # refused, no such host, timed out
        reason = getattr(exc, "reason", exc)
        raise StackError(f"could not reach {request.url}: {reason}") from None


def _json_body(data: bytes) -> dict[str, Any]:
    """A response body as a JSON object; anything else as ``{"message": <its text>}``."""
    try:
        body = json.loads(data or b"{}")
    except ValueError:
        body = None
    if isinstance(body, dict):
        return body
    text = " ".join(data.decode("utf-8", errors="replace").split())
    return {"message": text[:200]}


def smoke(
    session: boto3.Session, url: str, query: str, expect: list[str], top: int
) -> tuple[bool, str]:
    """Search ``query`` and check that every id of ``expect`` is in the first ``top``
    candidates; returns (passed, what was seen)."""
    status, body = signed_search(session, url, {"query": query, "limit": top})
    ids = [c.get("id") for c in body.get("candidates") or []][:top]
    missing = [x for x in expect if x not in ids]
    seen = f"POST {url}search {query!r}: HTTP {status}, top {top}: {ids}"
    if status != 200:
        return False, f"{seen}; error: {body.get('error')}: {body.get('message')}"
    return not missing, seen + (f"; missing: {missing}" if missing else "")


def empty_bucket(session: boto3.Session, bucket: str) -> int:
    """Delete every object version and delete marker of ``bucket``; returns how many."""
    s3 = session.client("s3")
    deleted = 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        keys = [
            {"Key": v["Key"], "VersionId": v["VersionId"]}
            for v in page.get("Versions", []) + page.get("DeleteMarkers", [])
        ]
        if keys:
            s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
            deleted += len(keys)
    return deleted


def delete_stack(session: boto3.Session, stack_name: str) -> int:
    """Empty the stack's export and snapshot buckets, delete the stack and wait; returns
    objects deleted."""
    outputs = stack_outputs(session, stack_name)
    buckets = [output(outputs, "CatalogExportBucketName")]
    if "SnapshotBucketName" in outputs:
        buckets.append(outputs["SnapshotBucketName"])
    deleted = sum(empty_bucket(session, bucket) for bucket in buckets)
    cfn = session.client("cloudformation")
    cfn.delete_stack(StackName=stack_name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_name)
    return deleted


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("seed", "smoke", "delete"):
        p = sub.add_parser(name)
        p.add_argument("--stack-name", required=True)
        p.add_argument(
            "--region", help="AWS region (default: AWS_REGION, else samconfig.toml's region)"
        )
        if name == "seed":
            p.add_argument("--jsonl", type=Path, help="records to load (default: bundled)")
            p.add_argument("--via", choices=("table", "export"), default="table")
        if name == "smoke":
            p.add_argument("--query", default=DEFAULT_QUERY)
            p.add_argument("--expect", default=DEFAULT_EXPECT, help="comma-separated ids")
            p.add_argument("--top", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        return run(args, make_session(args.region))
    except StackError as exc:
        return fail(str(exc), 2)
    except NoCredentialsError:
        return fail(
            "no AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (see `aws configure`)",
            2,
        )
    except EndpointConnectionError as exc:
        return fail(f"could not reach AWS: {exc}", 2)
    except WaiterError as exc:
        return fail(f"{args.stack_name}: {exc}", 1)
    except ClientError as exc:
        return fail(f"AWS refused {exc.operation_name}: {exc.response['Error'].get('Message')}", 2)
    except BotoCoreError as exc:  # connection closed, read timeout, bad endpoint URL, ...
        return fail(f"could not reach AWS: {exc}", 2)


def fail(message: str, code: int) -> int:
    """Print ``error: <message>`` (one line) on stderr; returns ``code``."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return code


def run(args: argparse.Namespace, session: boto3.Session) -> int:
    """Run the parsed subcommand in ``session``; returns 0, or 1 when the smoke check failed.

    Raises:
        StackError, ClientError, BotoCoreError: see :func:`main`.
    """
    if args.command == "delete":
        deleted = delete_stack(session, args.stack_name)
        print(f"emptied the buckets ({deleted} objects), deleted {args.stack_name}")
        return 0
    outputs = stack_outputs(session, args.stack_name)
    if args.command == "smoke":
        expect = [x for x in args.expect.split(",") if x]
        url = output(outputs, "SearchApiUrl")
        passed, seen = smoke(session, url, args.query, expect, args.top)
        print(("PASS " if passed else "FAIL ") + seen)
        return 0 if passed else 1
    text, records = read_records(args.jsonl)
    if args.via == "table":
        n = seed_table(session, output(outputs, "CatalogTableName"), records)
        print(f"wrote {n} records to {outputs['CatalogTableName']} (its stream syncs them)")
    else:
        bucket = output(outputs, "CatalogExportBucketName")
        key = f"seed/{(args.jsonl.name if args.jsonl else 'tools.jsonl')}"
        arn = seed_export(session, bucket, output(outputs, "ReindexStateMachineArn"), text, key)
        print(f"uploaded {len(records)} records to s3://{bucket}/{key}, reindex {arn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
