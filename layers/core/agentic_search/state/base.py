"""The base of every wire model: camelCase on the wire (the seed contracts' spelling).

Also the one stopwatch helper of the package (:func:`elapsed_ms`).
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base for models serialized in camelCase; unknown keys are rejected."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def wire(self) -> dict[str, Any]:
        """JSON-able dict with camelCase keys (``None`` fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def wire_keys(model: type[BaseModel]) -> set[str]:
    """The keys a model's fields take on the wire (aliases where set)."""
    return {f.alias or name for name, f in model.model_fields.items()}


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start``, a :func:`time.perf_counter` reading (not rounded)."""
    return (time.perf_counter() - start) * 1000.0


__all__ = ["WireModel", "elapsed_ms", "wire_keys"]
