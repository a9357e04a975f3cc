"""Asking the configured model what it can do: does it answer, stream, call a tool when asked to, and how much it
reads (litellm's model information, where it knows the model). Each question is asked once, without retries; a
failure is said in `assistant.failures`' words."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from assistant.failures import LLMError
from assistant.llm import LLMConfig, complete, stream_completion
from common.retry import Retrier

ECHO = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Repeat a word back.",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
    },
}


@dataclass
class Probe:
    model: str
    answers: bool = False
    streams: bool = False
    calls_tools: bool = False
    context_tokens: int | None = None
    error: str | None = None
    error_kind: str | None = None
    at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def mode(self) -> str:
        """What the chat can do with this model: the agent needs tools; without a model that answers, search."""
        return "agent" if self.answers and self.calls_tools else "retrieval-only"


def _once() -> Retrier:
    return Retrier(retries=0, base=0.0, cap=0.0, max_wait=0.0)


def context_size(model: str) -> int | None:
    try:
        from assistant.llm import _litellm

        info = _litellm().get_model_info(model)
    except Exception:  # a model litellm does not list (most local ones): unknown, not an error
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


async def probe(config: LLMConfig) -> Probe:
    found = Probe(config.model, context_tokens=context_size(config.model))
    short = LLMConfig(config.model, config.api_base, config.api_key, config.timeout, max_tokens=32)
    try:
        found.answers = bool(complete(short, [{"role": "user", "content": "Reply with the single word: ready"}],
                                      retrier=_once()).strip())  # fmt: skip
        pieces = 0
        async for item in stream_completion(short, [{"role": "user", "content": "Count from 1 to 5."}], [], _once()):
            pieces += isinstance(item, str)
        found.streams = pieces > 0
        asked = [{"role": "user", "content": "Call the echo tool with the word 'ping'. Do not answer in text."}]
        async for item in stream_completion(short, asked, [ECHO], _once()):
            if not isinstance(item, str):
                found.calls_tools = any(call.name == "echo" for call in item.tool_calls)
    except LLMError as exc:
        found.error, found.error_kind = str(exc), exc.kind
    return found
