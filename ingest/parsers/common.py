"""Shared by the parsers: building a record or a readable failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import ValidationError

from ingest.report import Failure

T = TypeVar("T")
Outcome = T | Failure


def attempt(source: str, key: str, build: Callable[[], T]) -> "T | Failure":
    """Run build(); a malformed record becomes a Failure instead of stopping the run."""
    try:
        return build()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors()[:5])
        return Failure(source, key, f"invalid record: {problems}")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return Failure(source, key, f"malformed record: {type(exc).__name__}: {str(exc)[:300]}")


def text_or_none(value) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None
