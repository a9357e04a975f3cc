"""What each user's chat turns cost in tokens (and money, where the price is known), per day; and the optional
daily token budget (SCHOLARLOOM_LLM_DAILY_TOKENS) each user's turns are held to."""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import case, func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from auth.models import LLMUsage

log = logging.getLogger(__name__)


def today(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d")


def usage_row(
    username: str, model: str, mode: str, prompt_tokens: int, completion_tokens: int, estimated: bool = False,
    cost_usd: float | None = None, now: datetime | None = None,
) -> LLMUsage:  # fmt: skip
    return LLMUsage(username=username, day=today(now), model=model, mode=mode, prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens, estimated=estimated, cost_usd=cost_usd)  # fmt: skip


def record_usage(engine: Engine, *args, **kwargs) -> None:
    """One row written now (`usage_row`'s arguments): for a day other than today; turns go through `UsageBook`."""
    with Session(engine) as session:
        session.add(usage_row(*args, **kwargs))
        session.commit()


class UsageBook:
    """Each turn's usage, written by a thread of its own, in batches, never by the turn.

    A turn's row was an INSERT and a commit the turn waited for before its answer was delivered: under load the
    write waited for SQLite's write lock (the chat history's writers hold it), in one of the event loop's six
    worker threads, and the turns behind it waited for a thread. Now `record` only queues the row; the writer
    commits what is queued at most every `every` seconds, in one transaction, and keeps trying when the database is
    busy or away. What is queued still counts for the daily budget (`tokens_today`)."""

    def __init__(self, engine: Engine, every: float = 0.5) -> None:
        self.engine, self.every = engine, every
        self._queue: queue.Queue[LLMUsage | None] = queue.Queue()
        self._pending: dict[tuple[str, str], int] = {}  # (user, day) -> tokens queued, not yet committed
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.written = 0  # rows committed (for tests)

    def record(self, username: str, model: str, mode: str, prompt_tokens: int, completion_tokens: int,
               estimated: bool = False, cost_usd: float | None = None) -> None:  # fmt: skip
        row = usage_row(username, model, mode, prompt_tokens, completion_tokens, estimated, cost_usd)
        with self._lock:
            key = (row.username, row.day)
            self._pending[key] = self._pending.get(key, 0) + row.prompt_tokens + row.completion_tokens
            if self._thread is None:
                self._thread = threading.Thread(target=self._write, name="scholarloom-usage", daemon=True)
                self._thread.start()
        self._queue.put(row)

    def tokens_today(self, username: str) -> int:
        """What the user spent today: what is written and what is queued."""
        with self._lock:
            queued = self._pending.get((username, today()), 0)
        return tokens_today(self.engine, username) + queued

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every row queued so far is written; False when `timeout` passed first."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self, timeout: float = 30.0) -> None:
        """Write what is queued, then stop the writer."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)

    def _write(self) -> None:
        while True:
            batch = [self._queue.get()]
            time.sleep(self.every)  # what arrives meanwhile joins this transaction
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows = [r.model_dump(exclude={"id"}) for r in batch if r is not None]
            while rows:
                try:
                    with Session(self.engine) as session:
                        session.add_all(LLMUsage(**row) for row in rows)
                        session.commit()
                    break
                except Exception:  # the database is busy or away: the rows wait, nothing is lost while we run
                    log.warning("%d usage rows could not be written yet; trying again", len(rows), exc_info=True)
                    time.sleep(1.0)
            with self._lock:
                for row in rows:
                    key = (row["username"], row["day"])
                    self._pending[key] -= row["prompt_tokens"] + row["completion_tokens"]
                    if self._pending[key] <= 0:
                        del self._pending[key]
                self.written += len(rows)
            for _ in batch:
                self._queue.task_done()
            if len(rows) < len(batch):  # the stop sign was in it
                return


def tokens_today(engine: Engine, username: str, now: datetime | None = None) -> int:
    with Session(engine) as session:
        total = session.exec(
            select(func.sum(LLMUsage.prompt_tokens + LLMUsage.completion_tokens)).where(
                LLMUsage.username == username, LLMUsage.day == today(now)
            )
        ).one()
    return int(total or 0)


def budget_notice(spent: int, budget: int | None) -> str | None:
    """What the user reads when today's budget is spent (the turn is then answered by search alone), else None."""
    if not budget:
        return None
    if spent < budget:
        return None
    return (f"**Today's language-model budget is spent** ({spent:,} of {budget:,} tokens; it starts again at "
            "midnight UTC). Below is what search found for your question (retrieval-only).")  # fmt: skip


@dataclass(frozen=True)
class UsageRow:
    day: str
    username: str
    turns: int
    prompt_tokens: int
    completion_tokens: int
    estimated_turns: int
    cost_usd: float | None  # None: no turn of the day had a known price


def usage_by_user_and_day(engine: Engine, days: int = 31) -> list[UsageRow]:
    """Totals per user and day, newest day first, over the last `days` days that had any use."""
    with Session(engine) as session:
        rows = session.exec(
            select(LLMUsage.day, LLMUsage.username, func.count(), func.sum(LLMUsage.prompt_tokens),
                   func.sum(LLMUsage.completion_tokens), func.sum(case((LLMUsage.estimated.is_(True), 1), else_=0)),
                   func.sum(LLMUsage.cost_usd))  # fmt: skip
            .group_by(LLMUsage.day, LLMUsage.username)
            .order_by(LLMUsage.day.desc(), LLMUsage.username)
        ).all()
    kept = sorted({r[0] for r in rows}, reverse=True)[:days]
    return [UsageRow(d, u, n, int(p or 0), int(c or 0), int(e or 0), cost)
            for d, u, n, p, c, e, cost in rows if d in kept]  # fmt: skip
