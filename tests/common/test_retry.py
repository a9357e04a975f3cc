"""The one retry policy: bounded tries, back-off with jitter, the other side's pause honoured up to a ceiling."""

import asyncio

import pytest

from common.retry import GaveUp, Retrier


def policy(slept: list, **kwargs) -> Retrier:
    return Retrier(**{"retries": 2, "base": 1.0, "cap": 3.0, "max_wait": 10.0, "sleep": slept.append,
                      "jitter": lambda: 0.5, **kwargs})  # fmt: skip


def failing(*errors):
    """An operation that raises these errors in turn, then answers "done"."""
    queue = list(errors)

    def operation():
        if queue:
            raise queue.pop(0)
        return "done"

    return operation


def test_back_off_doubles_up_to_its_cap_and_the_tries_are_bounded():
    slept = []
    assert policy(slept, retries=3).call(failing(OSError(), OSError(), OSError()), lambda e: True) == "done"
    assert slept == [1.0, 2.0, 3.0]  # 1 x 2**n, times (0.5 + jitter), capped at 3
    slept.clear()
    with pytest.raises(GaveUp) as gave_up:
        policy(slept).call(failing(OSError("a"), OSError("b"), OSError("c")), lambda e: True)
    assert gave_up.value.attempts == 3 and str(gave_up.value.__cause__) == "c" and len(slept) == 2


def test_the_pause_asked_for_is_honoured_spread_or_refused_over_the_ceiling():
    slept = []
    assert policy(slept, asked_spread=0.1).call(failing(OSError(), OSError()), lambda e: 4.0) == "done"
    assert slept == [pytest.approx(4.2), pytest.approx(4.2)]
    slept.clear()
    assert policy(slept).call(failing(OSError()), lambda e: 0.0) == "done" and slept == [0.0]  # at once
    with pytest.raises(GaveUp) as gave_up:
        policy(slept).call(failing(OSError()), lambda e: 3600.0)
    assert gave_up.value.asked == 3600.0 and slept == [0.0]  # refused before any pause


def test_what_is_not_worth_another_try_is_raised_as_it_is():
    slept = []
    with pytest.raises(ValueError, match="bad request"):
        policy(slept).call(failing(ValueError("bad request")), lambda e: not isinstance(e, ValueError))
    assert slept == []


def test_coroutines_follow_the_same_rules_without_blocking():
    paused = []

    async def pause(seconds):
        paused.append(seconds)

    operation = failing(OSError())

    async def attempt():
        return operation()

    retrier = policy([], async_sleep=pause)
    assert asyncio.run(retrier.call_async(attempt, lambda e: True)) == "done" and paused == [1.0]
