"""Streaming chat completions with tool calls through litellm (any provider), imported lazily."""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

RETRIES = 2
MAX_RETRY_WAIT = 20.0  # a provider asking for a longer pause gets a clear message instead of a stalled chat


class LLMError(RuntimeError):
    """The language model could not answer; the message is safe to show the user."""


@dataclass(frozen=True)
class LLMConfig:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    max_tokens: int = 1200


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str = ""

    def parsed_arguments(self) -> dict:
        """The arguments as a dict; malformed JSON becomes an empty dict (the tool then reports what is missing)."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class Completion:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None


def _litellm():
    # Without this, importing litellm fetches a cost map from the internet.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    return litellm


def _retryable(litellm) -> tuple[type[Exception], ...]:
    """Errors worth another try: the provider is busy, slow or briefly down."""
    return (
        litellm.RateLimitError,
        litellm.APIConnectionError,
        litellm.Timeout,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
    )


def retry_wait(exc: Exception, attempt: int) -> float | None:
    """Seconds before the next try: the provider's Retry-After when it sent one (None when that is longer than we
    are willing to keep a user waiting), else exponential back-off with jitter."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    asked = None
    try:
        asked = float((headers or {}).get("retry-after", ""))
    except (TypeError, ValueError):
        asked = None
    if asked is not None:
        return asked * (1 + 0.1 * random.random()) if asked <= MAX_RETRY_WAIT else None
    return min(8.0, 0.5 * 2**attempt) * (0.5 + random.random())


async def _open_stream(config: LLMConfig, messages: list[dict], tools: list[dict]):
    litellm = _litellm()
    retryable = _retryable(litellm)
    for attempt in range(RETRIES + 1):
        try:
            return await litellm.acompletion(
                model=config.model,
                messages=messages,
                tools=tools or None,
                stream=True,
                api_base=config.api_base,
                api_key=config.api_key,
                timeout=config.timeout,
                max_tokens=config.max_tokens,
                max_retries=0,  # retries are ours (bounded, with jitter), not the SDK's on top of them
            )
        except retryable as exc:
            wait = retry_wait(exc, attempt)
            if attempt == RETRIES or wait is None:
                raise LLMError(
                    f"the language model is unavailable ({type(exc).__name__}); please try again shortly"
                ) from exc
            await asyncio.sleep(wait)
        except Exception as exc:  # authentication, bad request, unknown model...: retrying will not help
            raise LLMError(f"the language model refused the request ({type(exc).__name__})") from exc
    raise AssertionError("unreachable")


async def stream_completion(
    config: LLMConfig, messages: list[dict], tools: list[dict]
) -> AsyncIterator[str | Completion]:
    """Yields text deltas as they arrive, then the whole Completion (text and assembled tool calls)."""
    stream = await _open_stream(config, messages, tools)
    done = Completion()
    calls: dict[int, ToolCall] = {}
    try:
        async for chunk in stream:
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = choice.delta
            if getattr(delta, "content", None):
                done.text += delta.content
                yield delta.content
            for call in getattr(delta, "tool_calls", None) or []:
                # Only the first delta of a call carries its id and name; arguments arrive in pieces.
                slot = calls.setdefault(call.index or 0, ToolCall(id="", name=""))
                slot.id = call.id or slot.id
                if call.function is not None:
                    slot.name = call.function.name or slot.name
                    slot.arguments += call.function.arguments or ""
            if choice.finish_reason:
                done.finish_reason = choice.finish_reason
    except Exception as exc:
        raise LLMError(f"the language model stopped mid-answer ({type(exc).__name__})") from exc
    done.tool_calls = [c for _, c in sorted(calls.items()) if c.name]
    for number, call in enumerate(done.tool_calls):
        call.id = call.id or f"call_{number}"
    yield done


def complete(config: LLMConfig, messages: list[dict], json_object: bool = False) -> str:
    """One whole (not streamed) answer, with the same bounded retries as the chat; for batch jobs."""
    import time

    litellm = _litellm()
    retryable = _retryable(litellm)
    extra = {"response_format": {"type": "json_object"}} if json_object else {}
    for attempt in range(RETRIES + 1):
        try:
            response = litellm.completion(
                model=config.model,
                messages=messages,
                api_base=config.api_base,
                api_key=config.api_key,
                timeout=config.timeout,
                max_tokens=config.max_tokens,
                max_retries=0,
                **extra,
            )
            return response.choices[0].message.content or ""
        except retryable as exc:
            wait = retry_wait(exc, attempt)
            if attempt == RETRIES or wait is None:
                raise LLMError(f"the language model is unavailable ({type(exc).__name__})") from exc
            time.sleep(wait)
        except Exception as exc:
            raise LLMError(f"the language model refused the request ({type(exc).__name__}: {str(exc)[:200]})") from exc
    raise AssertionError("unreachable")
