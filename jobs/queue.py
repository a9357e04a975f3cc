"""Jobs: everything that writes to the archive, queued in the catalog and run by the one process that holds the index.

A small table of our own rather than a job library: the well-kept ones need Redis or RabbitMQ (rq, arq, dramatiq,
saq), PostgreSQL alone (procrastinate, pgqueuer) or SQLite alone (huey, litequeue), or only schedule (APScheduler
3); we need SQLite and PostgreSQL both, progress a terminal can follow, cancelling, and one worker. Each job's work
is resumable through the ingest ledger, so a job interrupted by a crash is simply queued again.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, func, select

from common.stored import StoredArguments
from jobs.arguments import DAILY_SHARES, share_size
from jobs.rows import Job, JobState, JobWorker, now as _now
from retrieval.upkeep.database import ShareUsedUp, hold_lock

__all__ = ["Job", "JobQueue", "JobRefused", "JobState", "JobWorker", "worker_name"]

MAX_FAILURES_KEPT = 200
USER_LIVE_JOBS = 20  # a user's jobs queued or running at once (files being read, papers being fetched)


# What a job is queued with: its kind's dataclass (`jobs.arguments`), or the JSON a row holds (a job retried)
Arguments = StoredArguments | Mapping[str, Any]


class JobRefused(ShareUsedUp):
    """The user has their share of the queue already; the message says which share and what to do."""


def worker_name() -> str:
    """This process's name among the servers on one database: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _ended_here(name: str) -> bool:
    """Whether the worker `name` ran on this host in a process that no longer exists. (A process id used again by
    another process reads as alive: that worker's jobs then wait for its beat to go stale, as on another host.)
    Worker names take host names to be one per machine or container, as Docker's default ones are: two containers
    given the same host name would also share the name "host:1" of their first process."""
    host, _, pid = name.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # (someone else's process: it exists)
        return False
    return False


class JobQueue:
    """Submitting, claiming, reporting and ending jobs: short transactions any process may run.

    One user cannot take the queue from the others: a job asked for a user (`for_user`) is refused when the user
    already has `user_live` jobs queued or running (or, with `daily`, that many of its kind in the last day), checked
    and added under the user's lock; and the worker takes users in turn (`claim`)."""

    def __init__(self, engine: Engine, user_live: int = USER_LIVE_JOBS) -> None:
        self.engine = engine
        self.user_live = user_live

    def _session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    def submit(self, kind: str, arguments: Arguments, asked_by: str, key: str | None = None, *, for_user: bool = False,
               daily: int | None = None) -> tuple[Job, bool]:  # fmt: skip
        """Queue a job (`kind`: a `jobs.arguments.JobKind`, with its arguments' dataclass); with a `key`, a job of the
        same key already queued or running is returned instead (False). `for_user`: within the user's share (see the
        class), else JobRefused."""
        with self._session() as session:
            try:
                job, created = self.add(session, kind, arguments, asked_by, key, for_user=for_user, daily=daily)
                session.commit()
                return job, created
            except IntegrityError:  # another user's request of the same key came first
                session.rollback()
        live = self.live(key)
        if live is None:  # it ended between our insert and this read: try once more
            return self.submit(kind, arguments, asked_by, key, for_user=for_user, daily=daily)
        return live, False

    def add(self, session: Session, kind: str, arguments: Arguments, asked_by: str, key: str | None = None, *,
            for_user: bool = False, daily: int | None = None) -> tuple[Job, bool]:  # fmt: skip
        """`submit` in the caller's transaction, which commits it (the job is flushed: it has its id)."""
        if isinstance(arguments, StoredArguments):
            arguments = arguments.to_stored()
        if for_user:
            hold_lock(session, f"user:{asked_by}")
        if key is not None and (live := session.exec(select(Job).where(Job.live_key == key)).first()) is not None:
            return live, False  # someone already asked: share their job (it takes nothing of anyone's share)
        if for_user:
            self._check_share(session, kind, asked_by, daily, share_size(arguments))
        job = Job(kind=str(kind), arguments=dict(arguments), asked_by=asked_by, key=key, live_key=key)
        session.add(job)
        session.flush()
        return job, True

    def _check_share(self, session: Session, kind: str, asked_by: str, daily: int | None, size: int = 1) -> None:
        mine = select(func.count()).select_from(Job).where(Job.asked_by == asked_by)
        live = session.exec(mine.where(Job.state.in_([JobState.QUEUED, JobState.RUNNING]))).one()
        if live >= self.user_live:
            raise JobRefused(f"You have {live} files or papers waiting to be read or fetched, the most one person may "
                             "have at once; try again when some are done.")  # fmt: skip
        if daily is not None and self._daily_used(session, kind, asked_by) + size > daily:
            raise JobRefused(f"You have asked for {daily} papers in the last day; try again later.")

    def daily_used(self, kind: str, asked_by: str) -> int:
        """How much of its daily share of `kind` the user spent in the last day (`DAILY_SHARES`, `share_size`)."""
        with self._session() as session:
            return self._daily_used(session, kind, asked_by)

    @staticmethod
    def _daily_used(session: Session, kind: str, asked_by: str) -> int:
        kinds = [str(k) for k in DAILY_SHARES.get(kind, (kind,))]
        since = _now() - timedelta(days=1)
        asked = session.exec(select(Job.arguments).where(Job.asked_by == asked_by, Job.kind.in_(kinds),
                                                         Job.created_at >= since))  # fmt: skip
        return sum(share_size(arguments) for arguments in asked)

    def live(self, key: str) -> Job | None:
        with self._session() as session:
            return session.exec(select(Job).where(Job.live_key == key)).first()

    def get(self, job_id: int) -> Job | None:
        with self._session() as session:
            return session.get(Job, job_id)

    def tally(self) -> list[tuple[str, str, int, float]]:
        """(kind, state, how many, seconds the finished ones took in all), for the server's metrics."""
        with self._session() as session:
            rows = session.exec(select(Job.kind, Job.state, func.count()).group_by(Job.kind, Job.state)).all()
            done = session.exec(
                select(Job.kind, Job.started_at, Job.finished_at).where(Job.finished_at.is_not(None),
                                                                        Job.started_at.is_not(None))  # fmt: skip
            ).all()
        seconds: dict[tuple[str, str], float] = {}
        for kind, started, finished in done:
            seconds[kind] = seconds.get(kind, 0.0) + max(0.0, (finished - started).total_seconds())
        return [(kind, state, count, seconds.get(kind, 0.0)) for kind, state, count in rows]

    def recent(self, limit: int = 50, asked_by: str | None = None) -> list[Job]:
        with self._session() as session:
            query = select(Job).order_by(Job.id.desc()).limit(limit)
            if asked_by is not None:
                query = query.where(Job.asked_by == asked_by)
            return list(session.exec(query).all())

    def last_of(self, kind: str, asked_by: str | None = None) -> Job | None:
        with self._session() as session:
            query = select(Job).where(Job.kind == kind)
            if asked_by is not None:
                query = query.where(Job.asked_by == asked_by)
            return session.exec(query.order_by(Job.id.desc()).limit(1)).first()

    def claim(self, worker: str = "serve") -> Job | None:
        """The next queued job, now running on `worker`; None when there is none. Users take turns: the oldest job
        of whoever was served longest ago (or never), so one user's hundred jobs do not make another's one wait."""
        with self._session() as session:
            for job_id in self._turns(session)[:5]:
                now = _now()
                taken = session.exec(
                    update(Job)
                    .where(Job.id == job_id, Job.state == JobState.QUEUED)
                    .values(state=JobState.RUNNING, started_at=now, heartbeat_at=now, attempts=Job.attempts + 1,
                            worker=worker)
                )
                session.commit()
                if taken.rowcount == 1:
                    return session.get(Job, job_id, populate_existing=True)
        return None

    @staticmethod
    def _turns(session: Session) -> list[int]:
        """Each waiting user's oldest queued job, the user served longest ago (or never) first."""
        heads = session.exec(select(Job.asked_by, func.min(Job.id)).where(Job.state == JobState.QUEUED)
                             .group_by(Job.asked_by)).all()  # fmt: skip
        if not heads:
            return []
        served = dict(session.exec(
            select(Job.asked_by, func.max(Job.started_at))
            .where(Job.asked_by.in_([who for who, _ in heads]), Job.started_at.is_not(None))
            .group_by(Job.asked_by)
        ).all())  # fmt: skip
        last = lambda who: served[who].timestamp() if served.get(who) else float("-inf")  # noqa: E731
        return [job_id for who, job_id in sorted(heads, key=lambda head: (last(head[0]), head[1]))]

    def requeue_orphans(self, within: timedelta = timedelta(seconds=15), starting: str | None = None) -> int:
        """Jobs left running by a worker that stopped beating (its process died), or by a worker on this host whose
        process is gone (known at once, without waiting `within` for its beat to go stale): queued again. Safe with
        several servers on one database: a live worker's jobs are left alone. `starting`: the name of a worker that
        has not claimed anything yet, so any job under its name was left by an earlier process that had the same
        name (a restarted container: same host name, same process id)."""
        alive = select(JobWorker.name).where(JobWorker.beat_at >= _now() - within)
        with self._session() as session:
            gone = [name for name in session.exec(select(JobWorker.name)).all() if _ended_here(name)]
            gone += [starting] if starting else []
            stale = Job.worker.is_(None) | Job.worker.not_in(alive) | Job.worker.in_(gone)
            orphaned = (Job.state == JobState.RUNNING) & stale
            if session.exec(select(Job.id).where(orphaned).limit(1)).first() is None:
                return 0  # the usual answer, read without taking the database's write lock
            moved = session.exec(update(Job).where(orphaned).values(state=JobState.QUEUED))
            session.commit()
            return moved.rowcount

    def report(self, job_id: int, progress: list[dict]) -> bool:
        """Store the job's progress; True when someone asked to cancel it."""
        with self._session() as session:
            session.exec(update(Job).where(Job.id == job_id).values(progress=progress, heartbeat_at=_now()))
            session.commit()
            return bool(session.exec(select(Job.cancel_requested).where(Job.id == job_id)).first())

    def finish(
        self,
        job_id: int,
        state: JobState,
        counts: dict | None = None,
        failures: list[dict] | None = None,
        error: str | None = None,
        note: str | None = None,
    ) -> None:
        values = dict(state=state, live_key=None, finished_at=_now(), error=error[:2000] if error else None)
        values.update(counts=counts or {}, failures=(failures or [])[:MAX_FAILURES_KEPT], note=note)
        with self._session() as session:
            session.exec(update(Job).where(Job.id == job_id).values(**values))
            session.commit()

    def requeue(self, job_id: int) -> None:
        """Back in the queue (the server stopped in the middle of it)."""
        with self._session() as session:
            session.exec(update(Job).where(Job.id == job_id).values(state=JobState.QUEUED))
            session.commit()

    def cancel(self, job_id: int) -> Job | None:
        """A queued job ends now; a running one at its next progress report."""
        with self._session() as session:
            job = session.get(Job, job_id)
            if job is None or not JobState(job.state).live:
                return job
            if job.state == JobState.QUEUED:
                job.state, job.live_key, job.finished_at = JobState.CANCELLED, None, _now()
            job.cancel_requested = True
            session.add(job)
            session.commit()
            return job

    def retry(self, job_id: int, asked_by: str) -> tuple[Job, bool] | None:
        """A failed or cancelled job, queued again as a new job with the same arguments."""
        job = self.get(job_id)
        if job is None or JobState(job.state).live:
            return None
        return self.submit(job.kind, job.arguments, asked_by, job.key)

    # --- the worker's heartbeat ---------------------------------------------------------------------------
    def beat(self, name: str, pid: int) -> None:
        with self._session() as session:
            worker = session.get(JobWorker, name) or JobWorker(name=name, pid=pid, beat_at=_now())
            worker.pid, worker.beat_at = pid, _now()
            session.add(worker)
            stale = select(JobWorker).where(JobWorker.beat_at < _now() - timedelta(days=1))
            for gone in session.exec(stale):  # processes long dead
                session.delete(gone)
            session.commit()

    def say_model(self, name: str, pid: int, line: str) -> None:
        """Keep what the server `name` last learnt about its model (the row is made if the server has not beaten
        yet)."""
        with self._session() as session:
            worker = session.get(JobWorker, name) or JobWorker(name=name, pid=pid, beat_at=_now())
            worker.model = line[:1000]
            session.add(worker)
            session.commit()

    def workers(self, within: timedelta = timedelta(seconds=15)) -> list[JobWorker]:
        """The servers taking jobs (they beat within `within`), by name."""
        with self._session() as session:
            query = select(JobWorker).where(JobWorker.beat_at >= _now() - within).order_by(JobWorker.name)
            return list(session.exec(query).all())

    def gone(self, name: str) -> None:
        with self._session() as session:
            worker = session.get(JobWorker, name)
            if worker is not None:
                session.delete(worker)
                session.commit()

    def worker_alive(self, within: timedelta = timedelta(seconds=15)) -> JobWorker | None:
        with self._session() as session:
            query = select(JobWorker).where(JobWorker.beat_at >= _now() - within)
            return session.exec(query.order_by(JobWorker.beat_at.desc())).first()
