"""Sign-in throttling per account and per address, with exponential back-off after repeated failures."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass
class _State:
    failures: int = 0
    blocked_until: float = 0.0


class Throttle:
    """free_failures wrong guesses are free; each further one doubles the wait, up to max_delay seconds."""

    def __init__(self, free_failures: int = 5, base_delay: float = 1.0, max_delay: float = 900.0, clock=time.monotonic):
        self.free_failures = free_failures
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.clock = clock
        self._states: dict[str, _State] = {}
        self._lock = threading.Lock()

    def retry_after(self, *keys: str) -> float:
        """Seconds until these keys may try again; 0 when they may now."""
        now = self.clock()
        with self._lock:
            waits = [self._states[k].blocked_until - now for k in keys if k in self._states]
        return max([0.0, *waits])

    def failed(self, *keys: str) -> None:
        now = self.clock()
        with self._lock:
            for key in keys:
                state = self._states.setdefault(key, _State())
                state.failures += 1
                extra = state.failures - self.free_failures
                if extra > 0:
                    state.blocked_until = now + min(self.max_delay, self.base_delay * 2 ** (extra - 1))

    def succeeded(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._states.pop(key, None)
