"""The base of every wire model: camelCase on the wire (the seed contracts' spelling).

Also the one stopwatch helper of the package (:func:`elapsed_ms`).
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base for models serialized in camelCase; unknown keys are rejected. Each model's
    validator and serializer are built on its first use, not at import (``defer_build``):
    a process uses a few of the package's models (a cache hit: the response's)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )

    def wire(self) -> dict[str, Any]:
        """JSON-able dict with camelCase keys (``None`` fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def wire_keys(model: type[BaseModel]) -> set[str]:
    """The keys a model's fields take on the wire (aliases where set)."""
    return {f.alias or name for name, f in model.model_fields.items()}


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start``, a :func:`time.perf_counter` reading (not rounded)."""
    return (time.perf_counter() - start) * 1000.0


__all__ = ["WireModel", "elapsed_ms", "value_text", "wire_keys"]


def value_text(value: Any) -> str:
    """A record or filter value as people write it: a whole float without its ``.0`` (JSON and
    the engines store 2023 and 10 as 2023.0 and 10.0: "released=2023", "price_monthly_usd=10"),
    booleans as yes/no, lists joined by ", ", None as empty, anything else ``str``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | tuple):
        return ", ".join(value_text(v) for v in value if v is not None)
    return str(value)
