"""Sign-in throttling per account and per address, with exponential back-off after repeated failures.

The counts live in the database (`sign_in_failures`), so every server process sharing it (several workers on
PostgreSQL) counts the same guesses, a restart forgets nothing, and memory does not grow with the number of
addresses that ever failed: a key is forgotten `forget_after` seconds after its last failure, once its
back-off is over.
"""

from __future__ import annotations

import time

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from auth.models import SignInFailures

TABLE = SignInFailures.__table__


class Throttle:
    """free_failures wrong guesses are free; each further one doubles the wait, up to max_delay seconds."""

    def __init__(
        self,
        engine: Engine,
        free_failures: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 900.0,
        forget_after: float = 86_400.0,
        clock=time.time,
    ) -> None:
        self.engine = engine
        self.free_failures = free_failures
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.forget_after = forget_after
        self.clock = clock
        TABLE.create(engine, checkfirst=True)

    def retry_after(self, *keys: str) -> float:
        """Seconds until these keys may try again; 0 when they may now."""
        now = self.clock()
        with self.engine.connect() as connection:
            until = connection.execute(select(func.max(TABLE.c.blocked_until)).where(TABLE.c.key.in_(keys))).scalar()
        return max(0.0, (until or 0.0) - now)

    def failures(self, key: str) -> int:
        """How many failures a key has on record (forgotten `forget_after` seconds after the last)."""
        with self.engine.connect() as connection:
            return connection.execute(select(TABLE.c.failures).where(TABLE.c.key == key)).scalar() or 0

    def failed(self, *keys: str) -> None:
        now = self.clock()
        with self.engine.begin() as connection:
            connection.execute(
                delete(TABLE).where(TABLE.c.updated < now - self.forget_after, TABLE.c.blocked_until < now)
            )
            for key in keys:
                failures = self._count(connection, key, now)
                extra = failures - self.free_failures
                if extra > 0:
                    until = now + min(self.max_delay, self.base_delay * 2 ** min(extra - 1, 60))
                    connection.execute(update(TABLE).where(TABLE.c.key == key).values(blocked_until=until))

    def _count(self, connection, key: str, now: float) -> int:
        """One more failure for key, counted in the database (two processes failing at once both count)."""
        bump = update(TABLE).where(TABLE.c.key == key).values(failures=TABLE.c.failures + 1, updated=now)
        found = connection.execute(bump.returning(TABLE.c.failures)).scalar()
        if found is not None:
            return found
        try:
            with connection.begin_nested():
                connection.execute(insert(TABLE).values(key=key, failures=1, blocked_until=0.0, updated=now))
            return 1
        except IntegrityError:  # another process inserted it first
            return connection.execute(bump.returning(TABLE.c.failures)).scalar() or 1

    def succeeded(self, *keys: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(delete(TABLE).where(TABLE.c.key.in_(keys)))
