"""The container's runtime: the one place handlers get what they work with, and the one
injection point for tests (:func:`use`).

A :class:`Runtime` holds the Lambda settings, the core settings (with secrets resolved through
Powertools ``parameters`` from Secrets Manager ARNs, never from plain environment values), the
domain registry (:class:`~agentic_search.wiring.DomainRegistry`: one Dependencies object per
domain, adapters built on first use), and, built on first use, the search orchestrator and the
sync status store. :func:`runtime` builds it from the environment once per container.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentic_search.config import Settings
from agentic_search.dependencies import Dependencies
from agentic_search.ports import SyncStatusStore
from agentic_search.wiring import DomainRegistry, build_sync_status, known_domains
from agentic_search_lambda.settings import LambdaSettings

if TYPE_CHECKING:
    from agentic_search_lambda.orchestrators import Orchestrator

#: Idempotency records live this long (s): longer than a stream record is retained (24 h).
IDEMPOTENCY_TTL_S = 48 * 3600


def resolve_secrets(lambda_settings: LambdaSettings) -> dict[str, Any]:
    """Core settings overrides read from Secrets Manager for each ``*_SECRET_ARN`` that is set.

    Raises:
        aws_lambda_powertools.utilities.parameters.exceptions.GetParameterError: when a secret
            cannot be read (the function fails at cold start, loudly, instead of running
            without its credentials).
    """
    arns = lambda_settings.secret_arns()
    if not arns:
        return {}
    from aws_lambda_powertools.utilities import parameters

    max_age = lambda_settings.secrets_max_age_s
    return {name: parameters.get_secret(arn, max_age=max_age) for name, arn in arns.items()}


class Runtime:
    """What a warm container keeps: settings, dependencies per domain, orchestrator, status.

    ``deps``, ``orchestrator`` and ``sync_status`` may be given (tests hand in fakes or
    a session's deps); otherwise they are built from the settings on first use.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        lambda_settings: LambdaSettings | None = None,
        *,
        deps: Callable[[str], Dependencies] | None = None,
        orchestrator: Orchestrator | None = None,
        sync_status: SyncStatusStore | None = None,
    ) -> None:
        self.lambda_settings = lambda_settings or LambdaSettings()
        self.settings = settings or Settings(**resolve_secrets(self.lambda_settings))
        self.deps = deps or DomainRegistry(self.settings)
        self._orchestrator = orchestrator
        self._sync_status = sync_status
        self._idempotency: tuple[Any, Any] | None = None
        self._iam_principals: Any = None
        self._domains: list[str] | None = None
        self._lock = threading.Lock()

    @property
    def orchestrator(self) -> Orchestrator:
        """Step Functions (``STATE_MACHINE_ARN``) or the local runner over :attr:`deps`."""
        with self._lock:
            if self._orchestrator is None:
                from agentic_search_lambda.orchestrators import from_settings

                self._orchestrator = from_settings(self.lambda_settings, self.deps)
            return self._orchestrator

    @property
    def iam_principals(self) -> Callable[[str], list[str]]:
        """A SigV4 caller's principals from its IAM identity (``ACCESS_IAM_TAGS``), kept for
        the container's life (its tag cache with it)."""
        with self._lock:
            if self._iam_principals is None:
                from agentic_search_lambda.iam_principals import IamPrincipals

                ls = self.lambda_settings
                self._iam_principals = IamPrincipals(
                    ls.access_iam_tags, ttl_s=ls.access_iam_tags_ttl_s
                )
            return self._iam_principals

    @property
    def sync_status(self) -> SyncStatusStore:
        """The sync status store (``SYNC_STATUS_TABLE``, else SQLite)."""
        with self._lock:
            if self._sync_status is None:
                self._sync_status = build_sync_status(self.settings)
            return self._sync_status

    @property
    def idempotency(self) -> tuple[Any, Any] | None:
        """Powertools idempotency on DynamoDB (``IDEMPOTENCY_TABLE``): the persistence layer
        and its config, built once; None without a table."""
        table = self.lambda_settings.idempotency_table
        if not table:
            return None
        with self._lock:
            if self._idempotency is None:
                from aws_lambda_powertools.utilities.idempotency import (
                    DynamoDBPersistenceLayer,
                    IdempotencyConfig,
                )

                config = IdempotencyConfig(
                    event_key_jmespath="dedupeKey",
                    raise_on_no_idempotency_key=True,
                    expires_after_seconds=IDEMPOTENCY_TTL_S,
                )
                self._idempotency = (DynamoDBPersistenceLayer(table_name=table), config)
            return self._idempotency

    def domains(self) -> list[str]:
        """The domains this runtime serves, the built-ins first: its registry's
        (:meth:`~agentic_search.wiring.DomainRegistry.names`), else
        :func:`~agentic_search.wiring.known_domains` of its settings, read once.

        Raises:
            SchemaError: for a ``DOMAIN_FILES`` entry that is missing or invalid.
        """
        with self._lock:
            if self._domains is None:
                names = getattr(self.deps, "names", None)
                self._domains = names() if callable(names) else list(known_domains(self.settings))
            return list(self._domains)

    def sync_dependencies(self) -> Dependencies:
        """The dependencies of the domain the sync functions write (``SYNC_DOMAIN``)."""
        return self.deps(self.lambda_settings.sync_domain)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def runtime() -> Runtime:
    """The container's runtime (from the environment on first use)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = Runtime()
        return _runtime


def use(rt: Runtime | None) -> None:
    """Make ``rt`` the container's runtime (``None``: build from the environment again)."""
    global _runtime
    with _runtime_lock:
        _runtime = rt


__all__ = ["Runtime", "resolve_secrets", "runtime", "use"]
