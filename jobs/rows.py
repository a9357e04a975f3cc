"""The job queue's tables: a row per job (its kind, JSON arguments, state, progress, counts, failures, who asked) and a
row per process that runs jobs (`jobs.queue` writes both)."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import StrEnum

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel

from retrieval.scholarly.models import empty_dict, empty_list


def now() -> datetime:
    return datetime.now(timezone.utc)


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def live(self) -> bool:
        return self in (JobState.QUEUED, JobState.RUNNING)


class Job(SQLModel, table=True):
    __tablename__ = "jobs"

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=40, index=True)
    arguments: dict = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    key: str | None = Field(default=None, max_length=200, index=True, description="what the job is about")
    live_key: str | None = Field(default=None, max_length=200, unique=True, description="key while queued or running")
    state: str = Field(default=JobState.QUEUED, max_length=12, index=True)
    asked_by: str = Field(default="cli", max_length=100, index=True)
    progress: list = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    counts: dict = Field(default_factory=empty_dict, sa_column=Column(JSON, nullable=False))
    failures: list = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    note: str | None = Field(default=None, max_length=2000, description="a closing line the job wrote")
    error: str | None = Field(default=None, max_length=2000)
    attempts: int = 0
    worker: str | None = Field(default=None, max_length=100, description="the worker running it (host:pid)")
    cancel_requested: bool = False
    created_at: datetime = Field(default_factory=now, index=True)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None


class JobWorker(SQLModel, table=True):
    """The process that runs jobs says it is alive here, so `scholarloom ingest` knows whom to hand a job to."""

    __tablename__ = "job_workers"

    name: str = Field(primary_key=True, max_length=100)
    pid: int
    beat_at: datetime
    # What this server's language model could do when the server last asked it (its probe's line), so an admin
    # reading any server's page sees every server's model (several `serve` processes on one database).
    model: str | None = Field(default=None, max_length=1000)
