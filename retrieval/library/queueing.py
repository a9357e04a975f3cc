"""What a user's uploads ask of the job queue: the job that reads an upload, queued with its row.

The queue is `jobs.queue.JobQueue` and the kinds of job are `jobs.registry`'s, but retrieval may not import jobs:
this module says what the uploads call of the queue (`JobSubmitter`) and what the reading job takes
(`UploadArguments`, its kind's name beside it, which `jobs.arguments.JobKind.UPLOAD` takes from here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from sqlmodel import Session

from common.stored import StoredArguments


@dataclass(frozen=True)
class UploadArguments(StoredArguments):
    """The `upload` job: read, describe and index one upload; `fields_only`: embed its corrected title and abstract
    again, its passages staying as they are."""

    KIND: ClassVar[str] = "upload"

    upload_id: int
    fields_only: bool = False

    def key(self) -> str:
        """One reading of an upload queued at a time (a correction joins a reading already queued)."""
        return f"{self.KIND}:{self.upload_id}"


class QueuedJob(Protocol):
    @property
    def id(self) -> int | None: ...


class JobSubmitter(Protocol):
    """What the uploads call of the job queue: a job queued in the caller's transaction (`add`) or its own."""

    def add(self, session: Session, kind: str, arguments: StoredArguments, asked_by: str, key: str | None = None, *,
            for_user: bool = False) -> tuple[QueuedJob, bool]: ...  # fmt: skip

    def submit(self, kind: str, arguments: StoredArguments, asked_by: str, key: str | None = None, *,
               for_user: bool = False) -> tuple[QueuedJob, bool]: ...  # fmt: skip
