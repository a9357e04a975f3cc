"""Admission: how much work runs at once, in all and per user, and a bounded line for the rest.

A newcomer runs at once when there is room (under the global cap and under its user's own cap); otherwise it waits in
one first-come line, at most `queue` long (`queue_per_user` of them one user's) and at most `wait_seconds`; past
either it is refused with `Busy`, which says so in words and gives the seconds after which trying again is likely to
work. A freed turn is handed straight to the first waiter whose user has room, so nobody who just arrived takes it
first, and a user at their own cap never holds up another user behind them. One `Admission` per kind of work (MCP
calls, chat questions, sign-ins); `/metrics` reads `snapshot()` (`common.metrics.Metrics.watch`). Async first
(`slot`); a thread may hold a turn too (`held`): the state is behind one lock, and a waiter is woken in its own loop
or thread.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

REASONS = ("queue_full", "user_queue_full", "wait_timeout")


class Limits(BaseModel):
    """The caps of one kind of work (a settings group: SCHOLARLOOM_MCP__*, SCHOLARLOOM_CHAT__*, ...); the defaults
    are the MCP calls'."""

    model_config = ConfigDict(frozen=True)

    at_once: int = Field(2, ge=1, le=1_000, description="Pieces of this work (an MCP call, a chat question, a "
                         "sign-in) computed at the same time, all users together.")
    per_user: int = Field(1, ge=1, le=1_000, description="Of those, how many one user's may be at once; their others "
                          "wait in line while other users' go on.")
    queue: int = Field(16, ge=0, le=100_000, description="Most pieces of work waiting for a turn, all users together; "
                       "past it one is refused at once, in words, with the seconds after which to try again.")
    queue_per_user: int = Field(4, ge=0, le=100_000, description="Most of one user's waiting at once (one user cannot "
                                "fill the line for everyone else).")
    wait_seconds: float = Field(20.0, gt=0, le=3_600, description="Longest one waits in line for a turn before it is "
                                "refused (in words, with a time to try again).")


class Busy(Exception):
    """A refusal: why (`reason`, one of REASONS), whole seconds after which to try again, and what to tell (str)."""

    def __init__(self, reason: str, retry_after: int, message: str) -> None:
        super().__init__(message)
        self.reason, self.retry_after = reason, retry_after


@dataclass(frozen=True)
class Snapshot:
    running: int
    waiting: int
    admitted: int  # since start, at once or after waiting
    refused: dict[str, int]  # since start, by reason (each of REASONS, zeros too)


class _Waiter:
    __slots__ = ("user", "granted", "wake")

    def __init__(self, user: str, wake: Callable[[], None]) -> None:
        self.user, self.granted, self.wake = user, False, wake


class Admission:
    """The turns of one kind of work (`name`: its label in /metrics; `noun`: what a refusal calls one piece of it).
    `clock` times how long turns are held, for the retry time a refusal gives."""

    def __init__(self, name: str, limits: Limits, noun: str = "request", clock: Callable[[], float] = time.monotonic):
        self.name, self.limits, self.noun, self.clock = name, limits, noun, clock
        self._lock = threading.Lock()
        self._running, self._by_user, self._waiting_by_user = 0, Counter[str](), Counter[str]()
        self._line: deque[_Waiter] = deque()
        self._admitted, self._refused = 0, Counter[str]()
        self._held_seconds = 1.0  # a turn's usual length (a moving average), before any was timed

    @asynccontextmanager
    async def slot(self, user: str, queued: Callable[[int], Awaitable[None]] | None = None) -> AsyncIterator[None]:
        """Holds one of `user`'s turns while the block runs; waits in line for it (awaiting `queued(place)` first,
        place 1 being next), or raises Busy."""
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        waiter, place = self._arrive(user, lambda: loop.call_soon_threadsafe(_resolve, turn))
        if waiter is not None:
            await self._await_turn(waiter, turn, place, queued)
        began = self.clock()
        try:
            yield
        finally:
            self._leave(user, self.clock() - began)

    async def _await_turn(self, waiter: _Waiter, turn: asyncio.Future, place: int, queued) -> None:
        try:
            if queued is not None:
                await queued(place)
            async with asyncio.timeout(self.limits.wait_seconds):
                await turn
        except TimeoutError:
            if not self._give_up(waiter):
                raise self._timed_out() from None
        except BaseException:  # cancelled (the client went away): a turn handed over meanwhile goes on to the next
            if self._give_up(waiter):
                self._leave(waiter.user, None)
            raise

    @contextmanager
    def held(self, user: str) -> Iterator[None]:
        """`slot` for a thread: blocks while it waits; raises Busy."""
        woken = threading.Event()
        waiter, _ = self._arrive(user, woken.set)
        if waiter is not None and not woken.wait(self.limits.wait_seconds) and not self._give_up(waiter):
            raise self._timed_out()
        began = self.clock()
        try:
            yield
        finally:
            self._leave(user, self.clock() - began)

    def snapshot(self) -> Snapshot:
        with self._lock:
            refused = {reason: self._refused[reason] for reason in REASONS}
            return Snapshot(self._running, len(self._line), self._admitted, refused)

    # --- the state, each step under the lock ---------------------------------------------------------------------
    def _arrive(self, user: str, wake: Callable[[], None]) -> tuple[_Waiter | None, int]:
        """(None, 0) when `user` may go on at once (the turn is taken); else its place in line. Raises Busy."""
        limits = self.limits
        with self._lock:
            if self._running < limits.at_once and self._by_user[user] < limits.per_user:
                self._take(user)
                return None, 0
            if len(self._line) >= limits.queue:
                waiting = f" and {self._many(len(self._line))} already waiting" if self._line else ""
                raise self._refuse("queue_full", len(self._line), limits.at_once,
                                   f"The server is busy: every turn is taken{waiting}.")
            mine = self._waiting_by_user[user]
            if mine >= limits.queue_per_user:
                raise self._refuse("user_queue_full", mine, limits.per_user,
                                   f"You already have {self._by_user[user]} {self.noun}(s) running and {mine} "
                                   "waiting for a turn.")  # fmt: skip
            waiter = _Waiter(user, wake)
            self._line.append(waiter)
            self._waiting_by_user[user] += 1
            return waiter, len(self._line)

    def _take(self, user: str) -> None:
        self._running += 1
        self._by_user[user] += 1
        self._admitted += 1

    def _leave(self, user: str, held: float | None) -> None:
        with self._lock:
            self._running -= 1
            _less(self._by_user, user)
            if held is not None:  # (None: a turn handed to a waiter that had gone, never used)
                self._held_seconds = 0.8 * self._held_seconds + 0.2 * held
            self._hand_on()

    def _hand_on(self) -> None:
        """Every turn free goes to the first waiter whose user has room (none is left waiting that could run)."""
        for waiter in list(self._line):
            if self._running >= self.limits.at_once:
                return
            if self._by_user[waiter.user] < self.limits.per_user:
                self._line.remove(waiter)
                _less(self._waiting_by_user, waiter.user)
                self._take(waiter.user)
                waiter.granted = True
                waiter.wake()

    def _give_up(self, waiter: _Waiter) -> bool:
        """Leaves the line; True when the turn had been handed over meanwhile (the waiter now holds it)."""
        with self._lock:
            if waiter.granted:
                return True
            self._line.remove(waiter)
            _less(self._waiting_by_user, waiter.user)
            self._hand_on()  # (its user's cap may have kept someone behind it waiting: not any more)
            return False

    def _many(self, count: int) -> str:
        return f"{count} {self.noun} is" if count == 1 else f"{count} {self.noun}s are"

    def _timed_out(self) -> Busy:
        with self._lock:
            return self._refuse("wait_timeout", len(self._line), self.limits.at_once,
                                f"The server is busy: this {self.noun} waited {self.limits.wait_seconds:g} s in line "
                                "without a turn.")  # fmt: skip

    def _refuse(self, reason: str, ahead: int, lanes: int, said: str) -> Busy:
        """Counted; the retry time is what those ahead should take, at the usual length of a turn."""
        self._refused[reason] += 1
        estimate = math.ceil(self._held_seconds * (ahead + 1) / lanes)
        retry = max(1, min(estimate, math.ceil(self.limits.wait_seconds)))
        return Busy(reason, retry, f"{said} Try again in {retry} s.")


def _resolve(turn: asyncio.Future) -> None:
    if not turn.done():
        turn.set_result(None)


def _less(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:  # (no entry left behind per user ever seen)
        del counts[key]
