"""Admission (`common.admission`): turns up to a global cap and a per-user cap, one first-come line of bounded length
and wait, refusals in words with a retry time, counted for /metrics; in a loop and from threads. Everything here runs
in one event loop, its steps driven by events: nothing sleeps to wait for a state (`settle` yields to the loop)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from common.admission import Admission, Busy, Limits
from common.metrics import Metrics


async def settle(admission: Admission, **expected: int) -> None:
    """Yields to the loop until the snapshot shows `expected` (running=, waiting=); fails if it never does."""
    for _ in range(200):
        now = admission.snapshot()
        if all(getattr(now, key) == value for key, value in expected.items()):
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{admission.snapshot()} never reached {expected}")


class Work:
    """A piece of work for `user` that holds its turn until `done()`; `started` is set once it has its turn."""

    def __init__(self, admission: Admission, user: str, log: list[str]) -> None:
        self.user, self.started, self.finish = user, asyncio.Event(), asyncio.Event()
        self.task = asyncio.ensure_future(self._run(admission, log))

    async def _run(self, admission: Admission, log: list[str]) -> None:
        async with admission.slot(self.user):
            log.append(self.user)
            self.started.set()
            await self.finish.wait()

    async def done(self) -> None:
        self.finish.set()
        await self.task


async def test_a_users_second_call_waits_while_another_users_goes_on():
    admission, log = Admission("mcp", Limits(at_once=2, per_user=1)), []
    first = Work(admission, "ola", log)
    await first.started.wait()
    second = Work(admission, "ola", log)
    await settle(admission, running=1, waiting=1)  # room in all, but not for ola
    other = Work(admission, "pia", log)
    await other.started.wait()
    assert not second.started.is_set() and log == ["ola", "pia"]
    await first.done()
    await second.started.wait()  # ola's freed turn went to her own waiting call
    await other.done(), await second.done()
    assert admission.snapshot().running == 0 and admission.snapshot().admitted == 3


async def test_the_line_is_first_come_first_served_and_a_user_at_their_cap_holds_up_nobody():
    admission, log = Admission("chat", Limits(at_once=2, per_user=1)), []
    holders = [Work(admission, "a", log), Work(admission, "b", log)]
    await settle(admission, running=2)
    waiting = [Work(admission, "a", log), Work(admission, "c", log), Work(admission, "d", log)]
    await settle(admission, waiting=3)
    await holders[1].done()  # b's turn: "a" is first in line but at her cap; "c" goes
    await waiting[1].started.wait()
    assert log == ["a", "b", "c"] and admission.snapshot().waiting == 2
    await holders[0].done()  # a's turn: her own waiting call, before d
    await waiting[0].started.wait()
    assert log == ["a", "b", "c", "a"]
    for work in (waiting[1], waiting[0], waiting[2]):
        await work.done()
    assert log[-1] == "d" and admission.snapshot().running == 0


async def test_a_full_line_is_refused_in_words_with_a_retry_time():
    now = [0.0]
    admission = Admission("mcp", Limits(at_once=1, per_user=1, queue=2, queue_per_user=1), noun="call",
                          clock=lambda: now[0])  # fmt: skip
    timed = Work(admission, "ola", [])
    await timed.started.wait()
    now[0] += 11  # one turn of 11 s: the usual length becomes 0.8 * 1 + 0.2 * 11 = 3 s
    await timed.done()
    holder, queued = Work(admission, "ola", []), Work(admission, "ola", [])
    await settle(admission, running=1, waiting=1)
    with pytest.raises(Busy) as mine:
        async with admission.slot("ola"):
            pass
    assert mine.value.reason == "user_queue_full" and mine.value.retry_after == 6  # her one waiting, then her
    assert str(mine.value) == ("You already have 1 call(s) running and 1 waiting for a turn. Try again in 6 s.")
    third = Work(admission, "pia", [])
    await settle(admission, waiting=2)
    with pytest.raises(Busy) as full:
        async with admission.slot("quinn"):
            pass
    assert full.value.reason == "queue_full" and full.value.retry_after == 9  # two ahead, then quinn: 3 x 3 s
    assert str(full.value) == ("The server is busy: every turn is taken and 2 calls are already waiting. "
                               "Try again in 9 s.")  # fmt: skip
    for work in (holder, queued, third):
        await work.done()
    assert admission.snapshot().refused == {"queue_full": 1, "user_queue_full": 1, "wait_timeout": 0}


async def test_waiting_too_long_is_refused_and_leaves_the_line():
    admission = Admission("mcp", Limits(at_once=1, queue=4, wait_seconds=0.05), noun="call")
    holder = Work(admission, "ola", [])
    await holder.started.wait()
    with pytest.raises(Busy) as late:
        async with admission.slot("pia"):
            pass
    assert late.value.reason == "wait_timeout" and late.value.retry_after == 1
    assert str(late.value).startswith("The server is busy: this call waited 0.05 s in line without a turn.")
    assert admission.snapshot().waiting == 0
    await holder.done()
    assert admission.snapshot().running == 0


async def test_a_cancelled_waiter_leaves_the_line_and_the_next_gets_the_turn():
    admission, log, places = Admission("mcp", Limits(at_once=1)), [], []

    async def told(place: int) -> None:
        places.append(place)

    holder = Work(admission, "ola", log)
    await holder.started.wait()
    gone = asyncio.ensure_future(admission.slot("pia", queued=told).__aenter__())
    await settle(admission, waiting=1)
    after = Work(admission, "quinn", log)
    await settle(admission, waiting=2)
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    assert places == [1] and admission.snapshot().waiting == 1
    await holder.done()
    await after.started.wait()
    await after.done()
    assert log == ["ola", "quinn"] and admission.snapshot().running == 0


async def test_a_thread_waits_for_its_turn_too():
    admission = Admission("mcp", Limits(at_once=1))
    holder, got = Work(admission, "ola", []), threading.Event()
    await holder.started.wait()

    def in_a_thread() -> None:
        with admission.held("pia"):
            got.set()

    thread = asyncio.get_running_loop().run_in_executor(None, in_a_thread)
    await settle(admission, waiting=1)
    assert not got.is_set()
    await holder.done()
    await thread
    assert got.is_set() and admission.snapshot().running == 0 and admission.snapshot().admitted == 2


async def test_metrics_show_turns_waiting_and_refusals():
    metrics, admission = Metrics(), Admission("mcp", Limits(at_once=1, queue=1))
    metrics.watch(admission)
    holder, waiter = Work(admission, "ola", []), Work(admission, "pia", [])
    await settle(admission, running=1, waiting=1)
    with pytest.raises(Busy):
        async with admission.slot("quinn"):
            pass
    text = metrics.render().decode()
    assert 'scholarloom_admission_running{kind="mcp"} 1.0' in text
    assert 'scholarloom_admission_waiting{kind="mcp"} 1.0' in text
    assert 'scholarloom_admission_admitted_total{kind="mcp"} 1.0' in text
    assert 'scholarloom_admission_refused_total{kind="mcp",reason="queue_full"} 1.0' in text
    assert 'scholarloom_admission_refused_total{kind="mcp",reason="wait_timeout"} 0.0' in text
    await holder.done(), await waiter.done()
