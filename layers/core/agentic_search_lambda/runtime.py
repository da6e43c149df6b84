"""Cold-start wiring: settings (secrets through Powertools parameters), engines, steps.

Secrets never sit in environment variables: the template passes the ARN of a Secrets Manager
secret (``QDRANT_API_KEY_SECRET_ARN``, ``MONGODB_URI_SECRET_ARN``, ``OPENAI_API_KEY_SECRET_ARN``)
and the value is fetched once per container with Powertools ``parameters`` (cached, max age
``SECRETS_MAX_AGE_S``, default 300 s).
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from agentic_search.config import Settings
from agentic_search.pipeline.runner import EngineRegistry
from agentic_search.pipeline.steps import SearchSteps

#: Settings field -> environment variable holding the ARN of the secret with its value.
SECRET_ARNS = {
    "qdrant_api_key": "QDRANT_API_KEY_SECRET_ARN",
    "mongodb_uri": "MONGODB_URI_SECRET_ARN",
    "openai_api_key": "OPENAI_API_KEY_SECRET_ARN",
}


def resolve_secrets(env: dict[str, str] | None = None) -> dict[str, Any]:
    """Settings overrides read from Secrets Manager for each ``*_SECRET_ARN`` that is set.

    Raises:
        aws_lambda_powertools.utilities.parameters.exceptions.GetParameterError: when a secret
            cannot be read (the function fails at cold start, loudly, instead of running
            without its credentials).
    """
    env = dict(os.environ) if env is None else env
    arns = {name: env[var] for name, var in SECRET_ARNS.items() if env.get(var)}
    if not arns:
        return {}
    from aws_lambda_powertools.utilities import parameters

    max_age = int(env.get("SECRETS_MAX_AGE_S", "300"))
    return {name: parameters.get_secret(arn, max_age=max_age) for name, arn in arns.items()}


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process's settings: environment plus resolved secrets."""
    return Settings(**resolve_secrets())


@lru_cache(maxsize=1)
def registry() -> EngineRegistry:
    """The engines of this container (kept warm between invocations)."""
    return EngineRegistry(settings())


@lru_cache(maxsize=1)
def steps() -> SearchSteps:
    """The step functions over :func:`registry`."""
    return SearchSteps(registry())


__all__ = ["SECRET_ARNS", "registry", "resolve_secrets", "settings", "steps"]
