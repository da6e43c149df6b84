"""The deployed :class:`~agentic_search.ports.SnapshotRegistry` (``VECTOR_STORE=edge-s3``):
snapshot objects in S3, the pointer and the writer lease in DynamoDB.

* Objects: ``snapshots/<collection>/v<version, 10 digits>-<token>.tar.gz``, written once
  (a fresh token per upload, so two writers never overwrite one another), with the SHA-256
  in the object's metadata. A retired object is tagged ``snapshot=retired``; the bucket's
  lifecycle rule (template.yaml, ``ExpireRetiredSnapshots``) deletes it a day later, so a
  reader still downloading it finishes.
* Table (``SNAPSHOT_TABLE``, hash key ``pk``): the pointer item ``pointer#<collection>``
  (``key``, ``version``, ``size``, ``sha256``, ``publishedAt``) and the lease item
  ``lease#<collection>`` (``owner``, ``expiresAt``). The lease is taken with a conditional
  put (absent or expired) and the pointer moved in one transaction with a check that the
  lease is still this writer's and unexpired and a condition that the pointer is still the
  one the writer started from.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentic_search.ports import SnapshotBusy, SnapshotConflict, SnapshotError
from agentic_search.wire.snapshots import SnapshotLease, SnapshotPointer

PREFIX = "snapshots/"
#: The tag the lifecycle rule expires.
RETIRED_TAG = {"Key": "snapshot", "Value": "retired"}
_CHUNK = 1 << 20


def snapshot_key(collection: str, version: int, token: str) -> str:
    """The object key of ``collection``'s snapshot at ``version`` (``token``: unique)."""
    return f"{PREFIX}{collection}/v{version:010d}-{token}.tar.gz"


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


class S3SnapshotRegistry:
    """Snapshots in ``bucket``, pointers and leases in ``table`` (see the module docstring).

    Raises: see :class:`~agentic_search.ports.SnapshotRegistry`.
    """

    name = "s3"

    def __init__(
        self,
        bucket: str,
        table: str,
        s3: Any | None = None,
        dynamodb: Any | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if s3 is None or dynamodb is None:
            import boto3

            s3 = s3 or boto3.client("s3")
            dynamodb = dynamodb or boto3.client("dynamodb")
        self.bucket = bucket
        self.table = table
        self._s3 = s3
        self._ddb = dynamodb
        self._clock = clock
        self._sleep = sleep

    def _where(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    # ----- the pointer ----------------------------------------------------------------------

    def pointer(self, collection: str) -> SnapshotPointer | None:
        """GetItem (strongly consistent) of ``pointer#<collection>``."""
        try:
            item = self._ddb.get_item(
                TableName=self.table,
                Key={"pk": {"S": f"pointer#{collection}"}},
                ConsistentRead=True,
            ).get("Item")
        except Exception as exc:  # botocore ClientError, endpoint errors
            raise SnapshotError(
                f"cannot read the snapshot pointer of {collection!r} in table {self.table}: {exc}"
            ) from exc
        if not item:
            return None
        return SnapshotPointer(
            collection=collection,
            key=item["key"]["S"],
            version=int(item["version"]["N"]),
            size=int(item["size"]["N"]),
            sha256=item["sha256"]["S"],
            published_at=float(item["publishedAt"]["N"]),
        )

    def move_pointer(
        self, new: SnapshotPointer, expected: SnapshotPointer | None, lease: SnapshotLease
    ) -> None:
        """One TransactWriteItems: the lease still ``lease.owner``'s and unexpired, the
        pointer still ``expected`` (absent when None), then the pointer is ``new``."""
        if expected is None:
            condition, values = "attribute_not_exists(pk)", {}
        else:
            condition = "#k = :ek AND version = :ev"
            values = {":ek": {"S": expected.key}, ":ev": {"N": str(expected.version)}}
        item = {
            "pk": {"S": f"pointer#{new.collection}"},
            "key": {"S": new.key},
            "version": {"N": str(new.version)},
            "size": {"N": str(new.size)},
            "sha256": {"S": new.sha256},
            "publishedAt": {"N": repr(new.published_at)},
        }
        put: dict[str, Any] = {"TableName": self.table, "Item": item}
        put["ConditionExpression"] = condition
        if values:
            put["ExpressionAttributeNames"] = {"#k": "key"}
            put["ExpressionAttributeValues"] = values
        check = {
            "TableName": self.table,
            "Key": {"pk": {"S": f"lease#{new.collection}"}},
            "ConditionExpression": "#o = :o AND expiresAt > :now",
            "ExpressionAttributeNames": {"#o": "owner"},
            "ExpressionAttributeValues": {
                ":o": {"S": lease.owner},
                ":now": {"N": repr(self._clock())},
            },
        }
        try:
            self._ddb.transact_write_items(TransactItems=[{"ConditionCheck": check}, {"Put": put}])
        except Exception as exc:
            if _code(exc) == "TransactionCanceledException":
                raise SnapshotConflict(
                    f"snapshot {self._where(new.key)} not published: the pointer of "
                    f"{new.collection!r} moved since version "
                    f"{expected.version if expected else 0} or this writer's lease was lost"
                ) from exc
            raise SnapshotError(
                f"cannot move the snapshot pointer of {new.collection!r}: {exc}"
            ) from exc

    # ----- the lease ------------------------------------------------------------------------

    def acquire(self, collection: str, ttl_s: float, wait_s: float) -> SnapshotLease:
        """Conditional PutItem of ``lease#<collection>`` (absent or expired), retried every
        half second for at most ``wait_s``."""
        owner = uuid.uuid4().hex
        deadline = self._clock() + wait_s
        while True:
            now = self._clock()
            lease = SnapshotLease(collection, owner, now + ttl_s)
            try:
                self._ddb.put_item(
                    TableName=self.table,
                    Item={
                        "pk": {"S": f"lease#{collection}"},
                        "owner": {"S": owner},
                        "expiresAt": {"N": repr(lease.expires_at)},
                    },
                    ConditionExpression="attribute_not_exists(pk) OR expiresAt < :now",
                    ExpressionAttributeValues={":now": {"N": repr(now)}},
                )
                return lease
            except Exception as exc:
                if _code(exc) != "ConditionalCheckFailedException":
                    raise SnapshotError(
                        f"cannot take the writer lease of {collection!r}: {exc}"
                    ) from exc
            if self._clock() >= deadline:
                held = self._lease_item(collection)
                raise SnapshotBusy(
                    f"another writer holds the lease of {collection!r} "
                    f"(owner {held.get('owner', {}).get('S', '?')}, until "
                    f"{held.get('expiresAt', {}).get('N', '?')}); waited {wait_s:g} s"
                )
            self._sleep(0.5)

    def _lease_item(self, collection: str) -> dict[str, Any]:
        out = self._ddb.get_item(
            TableName=self.table, Key={"pk": {"S": f"lease#{collection}"}}, ConsistentRead=True
        )
        return dict(out.get("Item") or {})

    def release(self, lease: SnapshotLease) -> None:
        """DeleteItem of the lease if it is still ``lease.owner``'s."""
        try:
            self._ddb.delete_item(
                TableName=self.table,
                Key={"pk": {"S": f"lease#{lease.collection}"}},
                ConditionExpression="#o = :o",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={":o": {"S": lease.owner}},
            )
        except Exception as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise SnapshotError(
                    f"cannot release the lease of {lease.collection!r}: {exc}"
                ) from exc

    # ----- the objects ----------------------------------------------------------------------

    def upload(self, collection: str, version: int, source: Path) -> SnapshotPointer:
        """PutObject (multipart past 8 MiB, boto3's transfer) of ``source`` as a new key."""
        key = snapshot_key(collection, version, uuid.uuid4().hex[:12])
        sha = file_sha256(source)
        try:
            self._s3.upload_file(
                str(source), self.bucket, key, ExtraArgs={"Metadata": {"sha256": sha}}
            )
        except Exception as exc:
            raise SnapshotError(f"cannot upload snapshot {self._where(key)}: {exc}") from exc
        return SnapshotPointer(
            collection, key, version, source.stat().st_size, sha, published_at=self._clock()
        )

    def download(self, pointer: SnapshotPointer, dest: Path) -> None:
        """GetObject streamed to ``dest``, its size and SHA-256 checked against the pointer
        (``dest`` is removed when the check fails)."""
        where = self._where(pointer.key)
        digest, size = hashlib.sha256(), 0
        try:
            body = self._s3.get_object(Bucket=self.bucket, Key=pointer.key)["Body"]
            with dest.open("wb") as fh:
                while chunk := body.read(_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
                    fh.write(chunk)
        except Exception as exc:
            dest.unlink(missing_ok=True)
            what = "is missing" if _code(exc) in ("NoSuchKey", "404") else f"failed: {exc}"
            raise SnapshotError(f"download of snapshot {where} {what}") from exc
        problem = None
        if size != pointer.size:
            problem = f"is truncated or resized: {size} bytes where the pointer says {pointer.size}"
        elif digest.hexdigest() != pointer.sha256:
            problem = "does not match the SHA-256 the pointer recorded"
        if problem:
            dest.unlink(missing_ok=True)
            raise SnapshotError(f"snapshot {where} {problem}")

    def retire(self, current: SnapshotPointer, previous: SnapshotPointer | None) -> int:
        """Tag the previous object and the other objects of ``current``'s version."""
        prefix = snapshot_key(current.collection, current.version, "")[: -len(".tar.gz")]
        listed = self._s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix).get("Contents", [])
        keys = {o["Key"] for o in listed} - {current.key}
        if previous is not None and previous.key != current.key:
            keys.add(previous.key)
        for key in sorted(keys):
            try:
                self._s3.put_object_tagging(
                    Bucket=self.bucket, Key=key, Tagging={"TagSet": [RETIRED_TAG]}
                )
            except Exception as exc:
                if _code(exc) not in ("NoSuchKey", "404"):
                    where = self._where(key)
                    raise SnapshotError(f"cannot retire snapshot {where}: {exc}") from exc
        return len(keys)


__all__ = ["PREFIX", "RETIRED_TAG", "S3SnapshotRegistry", "file_sha256", "snapshot_key"]
