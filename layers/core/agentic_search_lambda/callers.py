"""Who is asking, from the verified parts of an API Gateway HTTP API event (payload v2).

The caller's principals come only from ``requestContext.authorizer``, which API Gateway fills
after verifying the request (a client cannot set it): a JWT authorizer's claims
(``authorizer.jwt.claims``; the claims read are :attr:`LambdaSettings.access_claims`) or a
Lambda authorizer's context (``authorizer.lambda.principals``, which ``agentic-search serve``
sets from its token table), or, for a SigV4-signed request (``AuthMode=IAM``), the IAM
caller's ARN and its tags (``authorizer.iam.userArn``; :mod:`agentic_search_lambda.
iam_principals`). An event without them is an anonymous caller: public records only. Headers
and the body are never read for principals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agentic_search.wire import Caller
from agentic_search.wire.access import MAX_PRINCIPALS


def claim_values(value: Any) -> list[str]:
    """The principals one claim holds: a string, a list, or API Gateway's rendering of an
    array claim as ``"[a b c]"`` (its JWT authorizer passes arrays that way)."""
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            return [v.strip(" ,\"'") for v in text[1:-1].replace(",", " ").split() if v.strip()]
        return [text] if text else []
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    return []


def caller_of(
    event: Mapping[str, Any],
    claims: Iterable[str],
    iam: Callable[[str], list[str]] | None = None,
) -> Caller:
    """The caller of ``event``: its Lambda authorizer's ``principals``, else the values of the
    JWT claims named in ``claims``, else an IAM caller's principals (``iam(userArn)``: its ARN
    and tags; without ``iam``, the ARN alone); anonymous when there are none. At most
    :data:`~agentic_search.wire.access.MAX_PRINCIPALS` are kept (in claim order)."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    found: list[str] = []
    context = authorizer.get("lambda")
    if isinstance(context, Mapping) and "principals" in context:
        found = claim_values(context.get("principals"))
    else:
        jwt = authorizer.get("jwt") or {}
        token_claims = jwt.get("claims") if isinstance(jwt, Mapping) else None
        if isinstance(token_claims, Mapping):
            for name in claims:
                found += claim_values(token_claims.get(name))
        elif isinstance(signed := authorizer.get("iam"), Mapping) and signed.get("userArn"):
            arn = str(signed["userArn"])
            found = iam(arn) if iam is not None else [arn]
    unique = list(dict.fromkeys(p[:200] for p in found))[:MAX_PRINCIPALS]
    return Caller.of(unique)


__all__ = ["caller_of", "claim_values"]
