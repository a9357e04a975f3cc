"""Streaming chat completions with tool calls through litellm (any provider), imported lazily."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from assistant.failures import LLMError, describe
from assistant.provider import litellm_module
from common.retry import GaveUp, Retrier

__all__ = ["LLMError", "LLMConfig", "Completion", "ToolCall", "Streamer", "stream_completion", "complete",
           "llm_retrier"]


def llm_retrier(**clock) -> Retrier:
    """Two more tries at most, 0.5-8 s apart; a provider asking for a pause over 20 s gets a clear message instead
    of a stalled chat. `clock` takes `sleep`, `async_sleep` and `jitter` (tests record instead of sleeping)."""
    return Retrier(retries=2, base=0.5, cap=8.0, max_wait=20.0, asked_spread=0.1, **clock)


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


@dataclass
class Completion:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None  # as the provider reported them (None: it did not)
    completion_tokens: int | None = None


# How a chat request is made: `stream_completion` here, or `assistant.llm_process.LLMProcess.stream` in a child.
Streamer = Callable[..., AsyncIterator[str | Completion]]


def _retryable(litellm) -> tuple[type[Exception], ...]:
    """Errors worth another try: the provider is busy, slow or briefly down."""
    return (
        litellm.RateLimitError,
        litellm.APIConnectionError,
        litellm.Timeout,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
    )


def asked_pause(exc: BaseException) -> float | None:
    """The provider's Retry-After, in seconds, when it sent one."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    try:
        return float((headers or {}).get("retry-after", ""))
    except (TypeError, ValueError):
        return None


def _retry_on(litellm):
    retryable = _retryable(litellm)

    def verdict(exc: BaseException) -> float | bool:
        if not isinstance(exc, retryable):
            return False
        asked = asked_pause(exc)
        return True if asked is None else asked  # a Retry-After of 0 means at once, not a back-off

    return verdict


def _llm_error(exc: BaseException, config: LLMConfig) -> LLMError:
    """What failed, in words a user can act on (`assistant.failures`)."""
    return describe(exc, config.model, config.api_base, config.api_key, config.timeout)


async def _open_stream(config: LLMConfig, messages: list[dict], tools: list[dict], retrier: Retrier):
    litellm = litellm_module()

    async def attempt():
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
            stream_options={"include_usage": True},  # the tokens used, in the last chunk (dropped where unknown)
            drop_params=True,
        )

    try:
        return await retrier.call_async(attempt, _retry_on(litellm))
    except Exception as exc:
        raise _llm_error(exc, config) from exc


async def stream_completion(
    config: LLMConfig, messages: list[dict], tools: list[dict], retrier: Retrier | None = None
) -> AsyncIterator[str | Completion]:
    """Yields text deltas as they arrive, then the whole Completion (text and assembled tool calls)."""
    stream = await _open_stream(config, messages, tools, retrier or llm_retrier())
    done = Completion()
    calls: dict[int, ToolCall] = {}
    try:
        async for chunk in stream:
            if (usage := getattr(chunk, "usage", None)) is not None:
                done.prompt_tokens = getattr(usage, "prompt_tokens", None)
                done.completion_tokens = getattr(usage, "completion_tokens", None)
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
        raise LLMError(f"the language model stopped mid-answer ({type(exc).__name__})", "stopped") from exc
    finally:  # the user's stop (a cancelled task) ends the request too: the provider stops writing
        closing = getattr(stream, "aclose", None)
        if closing is not None:
            try:
                await closing()
            except Exception:  # already closed or broken: nothing left to end
                pass
    done.tool_calls = [c for _, c in sorted(calls.items()) if c.name]
    for number, call in enumerate(done.tool_calls):
        call.id = call.id or f"call_{number}"
    yield done


def complete(
    config: LLMConfig, messages: list[dict], json_object: bool = False, retrier: Retrier | None = None,
    counted: Callable[[int, int, bool], None] | None = None,
) -> str:  # fmt: skip
    """One whole (not streamed) answer, with the same bounded retries as the chat; for batch jobs. `counted` is told
    each answer's prompt and completion tokens (and whether they were estimated, four characters a token, because
    the provider reported none)."""
    litellm = litellm_module()
    extra = {"response_format": {"type": "json_object"}} if json_object else {}

    def attempt() -> str:
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
        text = response.choices[0].message.content or ""
        if counted is not None:
            usage = getattr(response, "usage", None)
            prompt, written = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
            if prompt is None or written is None:
                counted(sum(len(str(m.get("content") or "")) for m in messages) // 4, len(text) // 4, True)
            else:
                counted(int(prompt), int(written), False)
        return text

    try:
        return (retrier or llm_retrier()).call(attempt, _retry_on(litellm))
    except Exception as exc:
        error = _llm_error(exc, config)
        if not isinstance(exc, GaveUp):  # batch jobs log the provider's words (never a key: litellm redacts)
            error = LLMError(f"{error} ({str(exc)[:200]})", error.kind)
        raise error from exc
