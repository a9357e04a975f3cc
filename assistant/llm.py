"""Streaming chat completions with tool calls through litellm (any provider), imported lazily, and what the model's
reply holds beside its answer: tool calls as small local models really write them (`read_arguments`,
`calls_in_text`), and a reasoning model's thoughts, never shown as the answer (`ThinkingFilter`, `strip_thinking`)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from assistant.failures import LLMError, describe
from assistant.provider import litellm_module
from common.retry import GaveUp, Retrier

__all__ = ["LLMError", "LLMConfig", "Completion", "ToolCall", "Streamer", "stream_completion", "complete",
           "llm_retrier", "read_arguments", "calls_in_text", "ThinkingFilter", "strip_thinking"]


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


async def _open_stream(config: LLMConfig, messages: list[dict], tools: list[dict], retrier: Retrier,
                       whole: bool = False):  # fmt: skip
    litellm = litellm_module()
    # The tokens used, in the last chunk of a stream (dropped where unknown); a whole answer reports them itself.
    streamed = {} if whole else {"stream_options": {"include_usage": True}}

    async def attempt():
        return await litellm.acompletion(
            model=config.model,
            messages=messages,
            tools=tools or None,
            stream=not whole,
            api_base=config.api_base,
            api_key=config.api_key,
            timeout=config.timeout,
            max_tokens=config.max_tokens,
            max_retries=0,  # retries are ours (bounded, with jitter), not the SDK's on top of them
            drop_params=True,
            **streamed,
        )

    try:
        return await retrier.call_async(attempt, _retry_on(litellm))
    except Exception as exc:
        raise _llm_error(exc, config) from exc


async def stream_completion(
    config: LLMConfig, messages: list[dict], tools: list[dict], retrier: Retrier | None = None, whole: bool = False
) -> AsyncIterator[str | Completion]:
    """Yields text deltas as they arrive, then the whole Completion (text and assembled tool calls). `whole`: the
    answer asked for in one piece (nobody watches it being written: a mended answer), the Completion alone, without
    the per-chunk work of a stream."""
    if whole:
        response = await _open_stream(config, messages, tools, retrier or llm_retrier(), whole=True)
        usage = getattr(response, "usage", None)
        yield Completion(text=response.choices[0].message.content or "",
                         prompt_tokens=getattr(usage, "prompt_tokens", None),
                         completion_tokens=getattr(usage, "completion_tokens", None))  # fmt: skip
        return
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


# --- tool calls as small local models write them ---------------------------------------------------------
# Arguments in Python's dict syntax, or the whole call written as JSON text instead of a tool call: what can be
# read is recovered; what cannot is said to the model.

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


# --- a reasoning model's thoughts, never the answer --------------------------------------------------------------------------
# `<think>...</think>`, as DeepSeek-R1, Qwen3 and others write them in the answer's text, never reach the user as
# the answer: hidden from the stream as it arrives, a tag split across chunks included,
# and removed from the final text. (`reasoning_content`, where a provider sends thoughts apart, is never read.)

OPEN, CLOSE = "<think>", "</think>"
_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkingFilter:
    """Feed it the stream's pieces; it returns what may be shown (thoughts left out)."""

    def __init__(self) -> None:
        self.inside = False
        self.pending = ""

    def feed(self, piece: str) -> str:
        data, self.pending, shown = self.pending + piece, "", []
        while data:
            tag = CLOSE if self.inside else OPEN
            at = data.find(tag)
            if at >= 0:
                if not self.inside:
                    shown.append(data[:at])
                data, self.inside = data[at + len(tag):], not self.inside
                continue
            keep = _partial_tag(data, tag)
            if not self.inside:
                shown.append(data[: len(data) - keep])
            self.pending = data[len(data) - keep:] if keep else ""
            break
        return "".join(shown)


def strip_thinking(text: str) -> str:
    """The answer without its thoughts; a text whose thoughts were opened by the prompt template (only `</think>`
    in it) loses what comes before that tag."""
    if CLOSE in text and OPEN not in text.split(CLOSE, 1)[0]:
        text = text.split(CLOSE, 1)[1]
    return _BLOCK.sub("", text).strip()
