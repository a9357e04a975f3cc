"""Running jobs: a worker thread in the process that holds the index, progress kept in the job's row.

The worker takes the oldest queued job, runs its kind (a function of the job's arguments, a `Summary` and a
progress object), and records how it ended. It runs at a lower CPU priority than the threads that answer users
(Linux: `nice` of the worker thread, which the encoder's own threads inherit), so an ingest slows chat turns
little. Cancelling and stopping are checked whenever the job reports progress.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from common.stored import StoredArguments
from ingest.report import Summary
from jobs.queue import Arguments, Job, JobQueue, JobState, worker_name

log = logging.getLogger(__name__)
ORPHANS_EVERY = 5.0  # seconds between looks for jobs left running by a worker that stopped beating (at start too)
JOB_SWITCH_INTERVAL = 0.0005  # seconds a thread holds the GIL before another may have it, while a job runs

RunKind = Callable[[dict, Summary, "JobProgress"], "str | None"]  # a kind's work, from a row; its closing note


class Cancelled(Exception):
    """Someone asked to cancel the running job."""


class Stopping(Exception):
    """The server is stopping: the job goes back to the queue and resumes on the next start."""


class JobProgress:
    """What the ingest functions report progress to (the subset of rich's Progress they use), kept in the job's row
    at most every `every` seconds; raises Cancelled or Stopping at a report once either is asked."""

    def __init__(self, queue: JobQueue, job_id: int, stop: threading.Event, every: float = 0.5, clock=time.monotonic):
        self.queue, self.job_id, self.stop, self.every, self.clock = queue, job_id, stop, every, clock
        self.tasks: list[dict] = []
        self._saved_at = float("-inf")

    def add_task(self, description: str, total: float | None = None) -> int:
        self.tasks.append({"description": description, "completed": 0, "total": total})
        self._save(force=True)
        return len(self.tasks) - 1

    def advance(self, task: int, advance: float = 1) -> None:
        self.tasks[task]["completed"] += advance
        self._save()

    def update(self, task: int, **fields) -> None:
        self.tasks[task].update({k: v for k, v in fields.items() if k in ("description", "completed", "total")})
        self._save()

    def _save(self, force: bool = False) -> None:
        if self.stop.is_set():
            raise Stopping()
        now = self.clock()
        if not force and now - self._saved_at < self.every:
            return
        self._saved_at = now
        if self.queue.report(self.job_id, self.tasks):
            raise Cancelled()

    def flush(self) -> None:
        self.queue.report(self.job_id, self.tasks)


@dataclass(frozen=True)
class Schedule:
    """A job queued again `every` after the last one of its kind that the schedule asked for (its arguments kept as
    the row will hold them)."""

    kind: str
    arguments: Arguments
    every: timedelta

    def __post_init__(self) -> None:
        if isinstance(self.arguments, StoredArguments):
            object.__setattr__(self, "arguments", self.arguments.to_stored())


class KeyedArguments(Protocol):
    def to_stored(self) -> dict[str, Any]: ...

    def key(self) -> str: ...


@dataclass(frozen=True)
class FollowUp:
    """The job a kind's job is followed by once it is done (declared on the kind, `jobs.registry`): its kind, and its
    arguments made from whoever asked for the job it follows. `serve` queues it (one at a time: a follow-up already
    queued is shared, by its arguments' `key()`); a command runs it in its own process, unless it is its asker's own
    (`here` false: what only they can see waits for the server)."""

    kind: str
    arguments: Callable[[str], KeyedArguments]
    here: bool = True

    def queue(self, queue: JobQueue, asked_by: str) -> None:
        arguments = self.arguments(asked_by)
        queue.submit(self.kind, arguments, asked_by, key=arguments.key())


def interval(text: str) -> timedelta:
    """`24h`, `90m`, `45s`, `2d` or a number of seconds; at least a minute."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text.strip().lower())
    if not match:
        raise ValueError(f"an interval is a number with s, m, h or d (e.g. 24h), not {text!r}")
    seconds = float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]
    if seconds < 60:
        raise ValueError("the update interval is at least a minute")
    return timedelta(seconds=seconds)


def _lower_priority(nice: int) -> None:
    try:  # on Linux a thread's id names it to setpriority; threads it starts inherit the value
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError) as exc:  # pragma: no cover - not Linux, or not allowed
        log.info("jobs run at normal priority: %s", exc)


class JobRunner:
    """One worker thread: claims queued jobs one at a time and runs them."""

    def __init__(
        self,
        queue: JobQueue,
        kinds: Mapping[str, RunKind],
        *,
        name: str | None = None,
        poll: float = 1.0,
        nice: int = 10,
        schedule: Schedule | None = None,
        on_close: Callable[[], None] | None = None,
        follow_ups: Mapping[str, FollowUp] | None = None,
    ) -> None:
        self.name = name or worker_name()
        self.queue, self.kinds, self.poll, self.nice = queue, kinds, poll, nice
        self.schedule, self.on_close = schedule, on_close
        self.follow_ups = follow_ups or {}  # kind -> what is queued when a job of that kind is done
        self.stop = threading.Event()
        self.wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.queue.requeue_orphans(starting=self.name)  # left running by a process that died (before this one beats)
        self.queue.beat(self.name, os.getpid())
        self._thread = threading.Thread(target=self._loop, name="scholarloom-jobs", daemon=True)
        self._thread.start()
        threading.Thread(target=self._beat, name="scholarloom-jobs-beat", daemon=True).start()

    def _beat(self, every: float = 5.0) -> None:
        """Says this worker is alive, also while a long job runs (its jobs are not anyone's orphans)."""
        while not self.stop.wait(every):
            try:
                self.queue.beat(self.name, os.getpid())
            except Exception:  # the database went away for a moment
                log.warning("the job worker's heartbeat could not be written", exc_info=True)

    def close(self, timeout: float = 30.0) -> None:
        self.stop.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.queue.gone(self.name)
        if self.on_close is not None:
            self.on_close()

    def _loop(self) -> None:
        _lower_priority(self.nice)
        looked = time.monotonic()
        while not self.stop.is_set():
            try:
                if time.monotonic() - looked >= ORPHANS_EVERY:  # (a worker dead on another host: 15 s)
                    looked = time.monotonic()
                    self.queue.requeue_orphans()
                self._maybe_schedule()
                job = self.queue.claim(self.name)
            except Exception:  # the database went away for a moment: try again later
                log.exception("the job queue cannot be read")
                job = None
            if job is None:
                self.wake.wait(self.poll)
                self.wake.clear()
                continue
            self.run(job)

    def _maybe_schedule(self) -> None:
        if self.schedule is None:
            return
        last = self.queue.last_of(self.schedule.kind, asked_by="schedule")
        due = last is None or datetime.now(timezone.utc) - last.created_at >= self.schedule.every
        if due:
            self.queue.submit(self.schedule.kind, self.schedule.arguments, "schedule", key=f"{self.schedule.kind}")

    def run(self, job: Job) -> None:
        kind = self.kinds.get(job.kind)
        if kind is None:
            self.queue.finish(job.id, JobState.FAILED, error=f"unknown kind of job {job.kind!r}")
            return
        summary, progress = Summary(), JobProgress(self.queue, job.id, self.stop)
        state, error, note = JobState.DONE, None, None
        # While a job runs, its Python work (BM25, passages, catalog writes) holds the GIL between the encoder's
        # calls: the server's threads get it back every 0.5 ms instead of every 5 (BENCHMARKS.md: jobs beside chat
        # turns). Only then: with no job, the shorter interval cost the chat under load (BENCHMARKS.md, issue 43).
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, JOB_SWITCH_INTERVAL))
        try:
            note = kind(job.arguments, summary, progress)
        except Stopping:
            progress.flush()
            self.queue.requeue(job.id)
            return
        except Cancelled:
            state = JobState.CANCELLED
        except Exception as exc:  # the job failed; the worker goes on with the next one
            log.warning("job %s (%s) failed", job.id, job.kind, exc_info=True)
            state, error = JobState.FAILED, str(exc) or type(exc).__name__
        finally:
            sys.setswitchinterval(interval)
        progress.flush()
        failures = [f.__dict__ for f in summary.failures]
        then = self.follow_ups.get(job.kind) if state == JobState.DONE else None  # (saved questions after papers)
        if then is not None and then.kind in self.kinds:  # queued before this job ends: whoever waits for the queue
            then.queue(self.queue, job.asked_by)  # to be empty never finds it empty in between (a crash loses none)
        self.queue.finish(job.id, state, dict(summary.counts), failures, error, note)
