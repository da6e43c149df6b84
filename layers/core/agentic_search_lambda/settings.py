"""The Lambda glue's own settings, read from the environment once per container
(pydantic-settings); the core's settings are :class:`agentic_search.config.Settings`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class LambdaSettings(BaseSettings):
    """What the handlers read beside the core settings (environment, case-insensitive).

    Secrets never sit in the environment: a ``*_SECRET_ARN`` names a Secrets Manager secret
    whose value is fetched once per container (cached ``secrets_max_age_s``).
    """

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    state_machine_arn: str | None = Field(
        default=None, description="Express state machine SearchApi starts (unset: in-process)."
    )
    map_max_concurrency: int = Field(
        default=8,
        ge=1,
        le=40,
        description="Sub-queries of one round the in-process runner retrieves at once (the Map).",
    )
    sync_domain: str = Field(default="tools", description="Domain the sync functions write.")
    idempotency_table: str | None = Field(
        default=None, description="DynamoDB table of Powertools idempotency (sync)."
    )
    sync_dlq_urls: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Dead-letter queues SyncRedrive drains (comma-separated)."
    )
    mcp_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host header values /mcp accepts (host:port, * any port; comma-separated), "
        "and their http(s) origins; empty: no Host/Origin check (the API's authorizer guards it).",
    )
    access_claims: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["sub", "groups", "tenant"],
        description="JWT claims whose values are the caller's principals in a domain with an "
        "access field (comma-separated; an array claim gives each element)",
    )
    access_iam_tags: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["groups", "tenant"],
        description="Tags of a SigV4 caller's IAM role or user whose values (space-separated) "
        "are its principals beside its ARN, read with iam:ListRoleTags/ListUserTags "
        "(comma-separated; empty: the ARN alone)",
    )
    access_iam_tags_ttl_s: float = Field(
        default=300.0, ge=0, description="How long a caller's IAM tags are reused (s)."
    )
    secrets_max_age_s: int = Field(
        default=300, ge=0, description="How long a fetched secret is reused (s)."
    )
    qdrant_api_key_secret_arn: str | None = Field(
        default=None, description="Secrets Manager ARN of QDRANT_API_KEY."
    )
    mongodb_uri_secret_arn: str | None = Field(
        default=None, description="Secrets Manager ARN of MONGODB_URI."
    )
    openai_api_key_secret_arn: str | None = Field(
        default=None, description="Secrets Manager ARN of OPENAI_API_KEY."
    )

    @field_validator(
        "sync_dlq_urls", "mcp_allowed_hosts", "access_claims", "access_iam_tags", mode="before"
    )
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [u.strip() for u in value.split(",") if u.strip()]
        return value

    def secret_arns(self) -> dict[str, str]:
        """Core settings field -> ARN of the secret holding its value, for those set."""
        arns = {
            "qdrant_api_key": self.qdrant_api_key_secret_arn,
            "mongodb_uri": self.mongodb_uri_secret_arn,
            "openai_api_key": self.openai_api_key_secret_arn,
        }
        return {name: arn for name, arn in arns.items() if arn}


__all__ = ["LambdaSettings"]
