"""One retry policy for everything that calls out (the LLM client, sync and async; the harvesters' HTTP client):
bounded tries, exponential back-off with jitter, the other side's Retry-After honoured up to a ceiling. Sleep
and randomness are injected, so no test waits for real."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


class GaveUp(Exception):
    """No further try: the tries ran out, or the other side asked for a longer pause than we allow."""

    def __init__(self, attempts: int, asked: float | None = None) -> None:
        self.attempts = attempts
        self.asked = asked  # set when the pause asked for was over the ceiling
        super().__init__(f"asked to wait {asked:.0f} s" if asked is not None else f"failed after {attempts} tries")


@dataclass
class Retrier:
    retries: int  # tries after the first
    base: float  # the first back-off, in seconds; doubled at each try
    cap: float  # the longest back-off
    max_wait: float  # a Retry-After longer than this ends the retries at once
    asked_spread: float = 0.0  # up to this fraction added to a Retry-After, so refused clients do not return at once
    sleep: Callable[[float], None] = time.sleep
    async_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    jitter: Callable[[], float] = field(default=random.random)

    def next_wait(self, attempt: int, asked: float | None = None) -> float:
        """Seconds before try `attempt + 1` (counted from 0), or GaveUp."""
        if asked is not None and asked > self.max_wait:
            raise GaveUp(attempt + 1, asked)
        if attempt >= self.retries:
            raise GaveUp(attempt + 1)
        if asked is not None:
            return asked * (1 + self.asked_spread * self.jitter())
        return min(self.cap, self.base * 2**attempt) * (0.5 + self.jitter())

    def call(self, operation: Callable[[], T], retry_on: Callable[[BaseException], float | bool]) -> T:
        """Run `operation` until it succeeds. `retry_on(exc)` says whether an exception is worth another try: False
        re-raises it; True or a float (the pause the other side asked for) retries. GaveUp is raised from the
        last exception."""
        attempt = 0
        while True:
            try:
                return operation()
            except Exception as exc:
                self.sleep(self._wait_after(exc, attempt, retry_on))
            attempt += 1

    async def call_async(
        self, operation: Callable[[], Awaitable[T]], retry_on: Callable[[BaseException], float | bool]
    ) -> T:
        """`call` for a coroutine: the same rules, sleeping without blocking the event loop."""
        attempt = 0
        while True:
            try:
                return await operation()
            except Exception as exc:
                await self.async_sleep(self._wait_after(exc, attempt, retry_on))
            attempt += 1

    def _wait_after(self, exc: Exception, attempt: int, retry_on) -> float:
        verdict = retry_on(exc)
        if verdict is False:
            raise exc
        try:
            return self.next_wait(attempt, None if verdict is True else float(verdict))
        except GaveUp as gave_up:
            raise gave_up from exc
