"""The JSON object in a model's answer: what the batch steps that ask for JSON read (an answer may wrap it in prose or
a fenced block)."""

from __future__ import annotations

import json


def json_object(text: str | None) -> object:
    """The answer's outermost `{...}` parsed (no quadratic scan of "{{{{"); ValueError says what is wrong."""
    text = text or ""
    first, last = text.find("{"), text.rfind("}")
    if first < 0 or last < first:
        raise ValueError("the answer holds no JSON object")
    try:
        return json.loads(text[first : last + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the JSON is malformed: {exc}") from None
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
