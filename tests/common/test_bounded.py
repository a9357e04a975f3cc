"""A function run on untrusted input in a child process: its answer, its ValueError, and a ceiling on its time
and memory; the parent's environment stays with the parent."""

from __future__ import annotations

import os
import threading
import time

import pytest

from common import bounded
from common.bounded import Overrun, run_bounded

HERE = "tests.common.test_bounded"


def spin(text: str):  # the children's functions
    while True:
        pass


def hoard(text: str):
    return len("x" * (1 << 30))


def refuse(text: str):
    raise ValueError(f"not a list: {text}")


def upper(text: str):
    return {"text": text.upper(), "secret": os.environ.get("SCHOLARLOOM_AUTH_SECRET")}


def test_the_answer_and_the_refusal_come_back_and_no_secret_goes_in(monkeypatch):
    monkeypatch.setenv("SCHOLARLOOM_AUTH_SECRET", "must-not-leak")
    assert run_bounded(f"{HERE}:upper", "déjà vu") == {"text": "DÉJÀ VU", "secret": None}
    with pytest.raises(ValueError, match="not a list: x"):
        run_bounded(f"{HERE}:refuse", "x")


def test_time_and_memory_have_a_ceiling():
    started = time.monotonic()
    with pytest.raises(Overrun, match="longer than 1 s"):
        run_bounded(f"{HERE}:spin", "", seconds=1)
    assert time.monotonic() - started < 10  # killed at its limit, not left to spin
    with pytest.raises(Overrun, match="more than 256 MB"):
        run_bounded(f"{HERE}:hoard", "", memory_mb=256)


def test_two_children_at_most_and_the_third_is_told_the_server_is_busy():
    errors = []

    def busy():
        try:
            run_bounded(f"{HERE}:spin", "", seconds=3)
        except Overrun as exc:
            errors.append(exc)

    threads = [threading.Thread(target=busy) for _ in range(2)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while bounded._PLACES._value and time.monotonic() < deadline:  # until both have their place
        time.sleep(0.01)
    with pytest.raises(Overrun, match="busy") as third:
        run_bounded(f"{HERE}:upper", "", seconds=0.5)
    assert third.value.busy
    for thread in threads:
        thread.join()
    assert len(errors) == 2 and not any(e.busy for e in errors)
