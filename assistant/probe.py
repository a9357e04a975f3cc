"""Asking the configured model what it can do: does it answer, stream, call a tool when asked to, and how much it
reads (litellm's model information, where it knows the model). Each question is asked once, without retries; a
failure is said in `assistant.failures`' words."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from assistant.failures import LLMError
from assistant.llm import LLMConfig, complete, stream_completion
from assistant.provider import litellm_module
from assistant.turn import TurnMode
from common.retry import Retrier

READY = "Reply with the single word: ready"
COUNT = "Count from 1 to 5."
CALL = "Call the echo tool with the word 'ping'. Do not answer in text."
PROMPTS = (READY, COUNT, CALL)
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
    def mode(self) -> TurnMode:
        """What the chat can do with this model: the agent with tools, the search-then-write pipeline without
        them (`assistant.pipeline`), and search alone without a model that answers."""
        if not self.answers:
            return TurnMode.RETRIEVAL_ONLY
        return TurnMode.AGENT if self.calls_tools else TurnMode.PIPELINE


def _once() -> Retrier:
    return Retrier(retries=0, base=0.0, cap=0.0, max_wait=0.0)


def context_size(model: str) -> int | None:
    try:
        info = litellm_module().get_model_info(model)
    except Exception:  # a model litellm does not list (most local ones): unknown, not an error
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


async def probe(config: LLMConfig) -> Probe:
    found = Probe(config.model, context_tokens=context_size(config.model))
    short = LLMConfig(config.model, config.api_base, config.api_key, config.timeout, max_tokens=32)
    try:
        found.answers = bool(complete(short, [{"role": "user", "content": READY}], retrier=_once()).strip())
        pieces = 0
        async for item in stream_completion(short, [{"role": "user", "content": COUNT}], [], _once()):
            pieces += isinstance(item, str)
        found.streams = pieces > 0
    except LLMError as exc:
        found.error, found.error_kind = str(exc), exc.kind
        return found
    try:  # a model that refuses tools (Ollama answers 400 "does not support tools") still answers: the pipeline
        async for item in stream_completion(short, [{"role": "user", "content": CALL}], [ECHO], _once()):
            if not isinstance(item, str):
                found.calls_tools = any(call.name == "echo" for call in item.tool_calls)
    except LLMError as exc:
        if exc.kind in ("unreachable", "timeout", "auth", "rate"):  # the model went away, not the tools
            found.error, found.error_kind = str(exc), exc.kind
    return found


class ProbeWatch:
    """The server's view of its model: probed once at start, then again after a failure with back-off (30 s,
    doubling, at most every 30 minutes) until it answers; `latest` is what admins see. A thread of its own, so a
    slow or absent model never delays the start."""

    def __init__(self, config: LLMConfig, first_wait: float = 30.0, longest_wait: float = 1800.0, sleep=None,
                 on_probe=None) -> None:  # fmt: skip
        import threading

        self.config = config
        self.on_probe = on_probe  # called with `summary()` after each probe (the server keeps it where admins read)
        self.first_wait, self.longest_wait = first_wait, longest_wait
        self.latest: Probe | None = None
        self.waits: list[float] = []  # the pauses taken between failed probes
        self._stop = threading.Event()
        self._sleep = sleep or self._stop.wait
        self._thread = threading.Thread(target=self._run, name="scholarloom-llm-probe", daemon=True)

    def start(self) -> "ProbeWatch":
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        import asyncio
        import logging

        wait = self.first_wait
        while not self._stop.is_set():
            self.latest = asyncio.run(probe(self.config))
            if self.on_probe is not None:
                try:
                    self.on_probe(self.summary())
                except Exception as exc:  # noqa: BLE001 - the database may be away; the probe goes on
                    logging.getLogger(__name__).warning("could not keep the model's probe: %s", exc)
            if self.latest.error is None:
                logging.getLogger(__name__).info("LLM %s: %s", self.config.model, self.summary())
                return
            logging.getLogger(__name__).warning("LLM %s: %s", self.config.model, self.latest.error)
            self.waits.append(wait)
            self._sleep(wait)
            wait = min(wait * 2, self.longest_wait)

    def summary(self) -> str:
        """One line for admins: what the model can do, or what failed, and when it was asked."""
        found = self.latest
        if found is None:
            return f"{self.config.model}: not asked yet"
        when = found.at.strftime("%Y-%m-%d %H:%M UTC")
        if found.error:
            return f"{self.config.model}: {found.error} (asked {when}; asked again with back-off)"
        can = ", ".join(x for x, ok in (("answers", found.answers), ("streams", found.streams),
                                         ("calls tools", found.calls_tools)) if ok)  # fmt: skip
        context = f"; reads {found.context_tokens:,} tokens" if found.context_tokens else ""
        tools = "" if found.calls_tools else "; did not call a tool when asked: it answers through the pipeline"
        return f"{self.config.model}: {can or 'no answer'}{context}{tools} (asked {when})"
