"""The principals of a caller that API Gateway verified with IAM (SigV4, ``AuthMode=IAM``).

An IAM-authorized HTTP API event names the caller (``requestContext.authorizer.iam.userArn``)
but carries none of its tags. The caller's principals are its IAM identity's ARN (a session of
an assumed role is its role: ``arn:aws:iam::ACCOUNT:role/NAME``) and the values of the
identity's tags named in ``ACCESS_IAM_TAGS`` (a value holds one or more principals separated by
spaces), read with ``iam:ListRoleTags`` / ``iam:ListUserTags`` and kept per container for
``ttl_s``. A lookup that fails leaves the caller its ARN alone (fewer principals, never more)
and is logged; it is asked again on the next request.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from aws_lambda_powertools import Logger

logger = Logger(child=True)

#: ``arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION`` and ``arn:aws:iam::ACCOUNT:{role,user}/
#: [PATH/]NAME``; any partition.
_ASSUMED = re.compile(r"^arn:(?P<p>[\w-]+):sts::(?P<acct>\d{12}):assumed-role/(?P<name>[^/]+)/.+$")
_IDENTITY = re.compile(
    r"^arn:(?P<p>[\w-]+):iam::(?P<acct>\d{12}):(?P<kind>role|user)/(.+/)?(?P<name>[^/]+)$"
)


def identity_of(user_arn: str) -> tuple[str, str, str] | None:
    """``(kind, name, principal ARN)`` of an IAM caller's ``userArn``: ``kind`` is ``role`` or
    ``user``; an assumed role's session maps to its role's ARN. ``None`` for any other ARN (a
    root or federated user: no tags to read)."""
    if m := _ASSUMED.match(user_arn):
        return "role", m["name"], f"arn:{m['p']}:iam::{m['acct']}:role/{m['name']}"
    if m := _IDENTITY.match(user_arn):
        return m["kind"], m["name"], user_arn
    return None


class IamPrincipals:
    """An IAM caller's principals (see the module docstring).

    ``client`` is a boto3 IAM client (made on first use when ``None``); ``tag_keys`` the tags
    whose values are principals; ``clock`` is seconds (monotonic).
    """

    def __init__(
        self,
        tag_keys: Sequence[str],
        client: Any = None,
        ttl_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tag_keys = list(tag_keys)
        self._client = client
        self.ttl_s = ttl_s
        self._clock = clock
        self._kept: dict[str, tuple[float, list[str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, user_arn: str) -> list[str]:
        """The principals of the caller ``user_arn``: its principal ARN, then its tags' values
        (tag order as configured); ``[user_arn]`` for an ARN that is no IAM role or user."""
        ident = identity_of(user_arn)
        if ident is None:
            return [user_arn] if user_arn else []
        kind, name, arn = ident
        if not self.tag_keys:
            return [arn]
        now = self._clock()
        with self._lock:
            kept = self._kept.get(arn)
        if kept is not None and now - kept[0] < self.ttl_s:
            return [arn, *kept[1]]
        try:
            tags = self._tags(kind, name)
        except Exception as exc:  # any failure: the ARN alone, logged
            logger.warning(
                "IAM tags unreadable: the caller keeps its ARN alone",
                extra={"principal": arn, "error": f"{type(exc).__name__}: {exc}"},
            )
            return [arn]
        values = [v for key in self.tag_keys for v in tags.get(key, "").split() if v]
        with self._lock:
            self._kept[arn] = (now, values)
        return [arn, *values]

    def _tags(self, kind: str, name: str) -> dict[str, str]:
        if self._client is None:
            import boto3

            self._client = boto3.client("iam")
        tags: dict[str, str] = {}
        marker: str | None = None
        while True:
            args: dict[str, Any] = {"RoleName" if kind == "role" else "UserName": name}
            if marker:
                args["Marker"] = marker
            page = (
                self._client.list_role_tags(**args)
                if kind == "role"
                else self._client.list_user_tags(**args)
            )
            tags.update({t["Key"]: t["Value"] for t in page.get("Tags", [])})
            if not page.get("IsTruncated"):
                return tags
            marker = page.get("Marker")


__all__ = ["IamPrincipals", "identity_of"]
