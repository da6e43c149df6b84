"""Who asks ``agentic-search serve``: the caller's principals from its token table or, for the
local CLI only, a trusted header (docs/guides/access-control.md).

* ``Authorization: Bearer <token>`` with a token of the table ``serve --tokens FILE`` loaded
  (a YAML or JSON mapping ``token: [principal, ...]``): that token's principals. A bearer
  token the table does not hold is a 401.
* The principals header (:data:`~agentic_search_cli.serve_link.PRINCIPALS_HEADER`, what
  ``agentic-search search --as`` sends): trusted only when serve is bound to loopback, the
  client is on loopback and the request carries serve's own token (the one in the home
  folder's serve-info file, which only the local user can read).
* Anything else: no principals (public records only).

The principals reach the API handler as a Lambda authorizer's context would
(``requestContext.authorizer.lambda.principals``, :mod:`agentic_search_lambda.callers`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class TokenTableError(ValueError):
    """The token table cannot be read or is not ``token: [principal, ...]``."""


def load_tokens(path: Path) -> dict[str, list[str]]:
    """The token table in ``path`` (YAML or JSON): token -> principals.

    Raises:
        TokenTableError: naming the file and what is wrong.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TokenTableError(f"cannot read the token table {path}: {exc}") from None
    if not isinstance(data, Mapping) or not data:
        raise TokenTableError(f"{path}: expected a mapping of token: [principal, ...]")
    out: dict[str, list[str]] = {}
    for token, principals in data.items():
        if not isinstance(token, str) or len(token) < 16:
            raise TokenTableError(f"{path}: token {str(token)[:8]!r}... is under 16 characters")
        if isinstance(principals, str):
            principals = [principals]
        if not isinstance(principals, list) or not all(
            isinstance(p, str) and p.strip() for p in principals
        ):
            raise TokenTableError(f"{path}: the principals of a token must be a list of names")
        out[token] = [p.strip() for p in principals]
    return out


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@dataclass
class ServeAccess:
    """How serve tells its callers apart: the token table, whether it is bound to loopback,
    and its own token (the CLI's; None when serve wrote no serve-info file)."""

    tokens: dict[str, list[str]] = field(default_factory=dict)
    bound_loopback: bool = True
    local_token: str | None = None

    def principals(self, headers: Mapping[str, str], client_ip: str) -> list[str] | None:
        """The caller's principals (``[]``: anonymous), or None for a bearer token the table
        does not hold (a 401)."""
        lower = {k.lower(): v for k, v in headers.items()}
        auth = lower.get("authorization") or ""
        if auth[:7].lower() == "bearer ":
            token = auth[7:].strip()
            for known, principals in self.tokens.items():
                if hmac.compare_digest(known.encode(), token.encode()):
                    return list(principals)
            return None
        from agentic_search_cli.serve_link import PRINCIPALS_HEADER, TOKEN_HEADER

        claimed = lower.get(PRINCIPALS_HEADER)
        if claimed is None or not self._trusted(lower.get(TOKEN_HEADER) or "", client_ip):
            return []
        try:
            value: Any = json.loads(claimed)
        except ValueError:
            return []
        return [str(p) for p in value if str(p).strip()] if isinstance(value, list) else []

    def _trusted(self, token: str, client_ip: str) -> bool:
        local = self.local_token
        return (
            self.bound_loopback
            and _loopback(client_ip)
            and local is not None
            and hmac.compare_digest(token.encode(), local.encode())
        )


__all__ = ["ServeAccess", "TokenTableError", "load_tokens"]
