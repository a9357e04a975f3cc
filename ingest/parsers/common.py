"""Shared by the parsers: building a record or a readable failure."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
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
    except RecursionError:
        return Failure(source, key, "malformed record: nested too deeply")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return Failure(source, key, f"malformed record: {type(exc).__name__}: {str(exc)[:300]}")


def text_or_none(value) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def parse_json_lines(
    lines: Iterable[str], source: str, key_of: Callable[[dict], str | None], build: Callable[[dict], T]
) -> Iterator["T | Failure"]:
    """One JSON record a line; a line that is not JSON, or not an object, is a failure, not the end of the run."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Failure(source, f"line {number}", f"not JSON: {exc}")
            continue
        except RecursionError:  # "[[[[..." thousands deep: the parser gives up; the run must not
            yield Failure(source, f"line {number}", "not usable: JSON nested too deeply")
            continue
        if not isinstance(raw, dict):
            yield Failure(source, f"line {number}", f"malformed record: a JSON {type(raw).__name__}, not an object")
            continue
        yield attempt(source, key_of(raw) or f"line {number}", lambda raw=raw: build(raw))
