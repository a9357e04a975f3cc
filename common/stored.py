"""A frozen dataclass kept as a JSON object in a column (a job's arguments): read tolerantly, written compactly.

Rows outlive the code that wrote them: a job queued by an older version is resumed by a newer one. So reading
ignores a key this version does not know and gives a missing one its default; writing leaves out what equals its
default, so the row holds what was asked and a default changed later applies to rows written before it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, Self


@dataclass(frozen=True)
class StoredArguments:
    """Base of the argument dataclasses; a field's `metadata={"key": ...}` names its JSON key when that differs."""

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Self:
        """The arguments a row holds (JSON lists read as tuples; a key holding null takes the default)."""
        values = {}
        for spec in fields(cls):
            key = spec.metadata.get("key", spec.name)
            if (value := stored.get(key)) is not None:  # (None, as older rows wrote for "not given": the default)
                values[spec.name] = tuple(value) if isinstance(value, list) else value
        return cls(**values)

    def to_stored(self) -> dict[str, Any]:
        """The JSON object a row keeps: every field that differs from its default."""
        stored = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if _default(spec) is not MISSING and value == _default(spec):
                continue
            stored[spec.metadata.get("key", spec.name)] = list(value) if isinstance(value, tuple) else value
        return stored


def _default(spec) -> Any:
    if spec.default is not MISSING:
        return spec.default
    return spec.default_factory() if spec.default_factory is not MISSING else MISSING
