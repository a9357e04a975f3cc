"""Tool calls as small local models really write them: arguments in Python's dict syntax, or the whole call
written as JSON text instead of a tool call. What can be read is recovered; what cannot is said to the model."""

from __future__ import annotations

import ast
import json
import re

from assistant.llm import ToolCall

_FENCE = re.compile(r"^```(?:json)?\s*|(?<!\s)\s*```$")  # a run of spaces is entered once, at its start


def read_arguments(raw: str) -> dict | None:
    """The arguments as a dict: JSON, or a Python literal dict ({'query': 'x'}, True/None); None when neither."""
    text = (raw or "").strip() or "{}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def calls_in_text(text: str, known: set[str]) -> list[ToolCall]:
    """Tool calls a model wrote as its answer's text ({"name": ..., "arguments": {...}}, a list of them, in a code
    fence or not), for tools that exist; [] when the text is an answer."""
    body = _FENCE.sub("", (text or "").strip())
    if not body.startswith(("{", "[")):
        return []
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return []
    found = []
    for n, item in enumerate(value if isinstance(value, list) else [value]):
        if not isinstance(item, dict):
            return []
        function = item.get("function") if isinstance(item.get("function"), dict) else {}
        name = item.get("name") or item.get("tool") or function.get("name")
        arguments = item.get("arguments", item.get("parameters", function.get("arguments", {})))
        if name not in known or not isinstance(arguments, (dict, str)):
            return []
        written = arguments if isinstance(arguments, str) else json.dumps(arguments)
        found.append(ToolCall(id=f"call_text_{n}", name=name, arguments=written))
    return found
