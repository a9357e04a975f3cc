"""What a job runs with, typed: the stores it writes through (`ingest.writer.Writer`), where the services and the
index are, its limits, the model of the analysis step, and how it gets its HTTP client. The composition root builds
one (`scholarloom.services.Services.job_context`): a command for its own run, `serve` for its worker. Nothing here
reads the settings."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ingest.http import PoliteClient
from ingest.pdf_worker import PdfLimits
from ingest.sources import SourceSettings
from ingest.writer import Writer
from jobs.digests import DigestPost
from retrieval.archive import Archive
from retrieval.library.uploads import UploadLimits, Uploads
from retrieval.library.zotero import Sealer
from retrieval.vectors.place import IndexPlace


class JobIncomplete(RuntimeError):
    """The job stopped early (a service failed); what it stored stays, and running it again resumes it."""


@dataclass(frozen=True)
class Analyst:
    """The analysis step's model: `ask(messages)` returns its JSON text; `unavailable` are the errors that mean the
    model could not answer (the step stops, what it stored stays)."""

    ask: Callable[[list[dict]], str]
    unavailable: tuple[type[BaseException], ...]
    # Asking for a user (a saved question's judge): `ask` with what it spends counted against that user's daily
    # token budget (SCHOLARLOOM_LLM_DAILY_TOKENS), or None when today's is spent. Unset: nobody is charged.
    for_user: Callable[[str], Callable[[list[dict]], str] | None] | None = None


class Progress(Protocol):
    """What a job reports its progress to (the part of rich's `Progress` the ingest steps use): a command's bars, or
    `serve`'s `jobs.runner.JobProgress`, which keeps it in the job's row."""

    def add_task(self, description: str, total: float | None = None) -> int: ...

    def advance(self, task: int, advance: float = 1) -> None: ...

    def update(self, task: int, **fields) -> None: ...


@dataclass(frozen=True)
class JobLimits:
    """How much one job may read: a downloaded PDF's bytes, an upload (`UploadLimits`), papers per batch, and the
    files and seconds of one Zotero sync (it holds the only worker meanwhile)."""

    pdf_max_bytes: int = 50_000_000
    upload: UploadLimits = UploadLimits()
    index_batch: int = 64
    zotero_files: int = 100
    zotero_seconds: float = 600.0

    def pdfs(self, memory_mb: int = 1024, seconds: float = 60.0) -> PdfLimits:
        return PdfLimits(memory_mb=memory_mb, seconds=seconds, max_bytes=self.pdf_max_bytes)

    def uploads(self) -> PdfLimits:
        return PdfLimits(max_bytes=self.upload.max_bytes, max_pages=self.upload.max_pages)


@dataclass(frozen=True)
class Backups:
    """What a backup keeps besides the stores: named folders of files, and the settings as a record (no secrets)."""

    folders: dict[str, Path]
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class JobContext:
    writer: Writer  # the stores a job writes through; its encoder: the worker's own in `serve`, the settings' in a CLI
    uploads: Uploads
    sources: SourceSettings
    place: IndexPlace  # where `index` lives: a rebuild makes its new index beside it
    limits: JobLimits = JobLimits()
    backups: Backups = Backups({})
    analyst: Analyst | None = None  # None: no model is configured (retrieval-only mode)
    # Makes the HTTP client a job fetches with. `serve` hands every job one long-lived polite client, so arXiv's
    # 3 s between requests holds across jobs too; tests replay recorded answers through it.
    clients: Callable[[], AbstractContextManager[PoliteClient]] | None = None
    sealer: Sealer | None = None  # opens the Zotero keys users connected (None: the server has no secret)
    post: DigestPost | None = None  # mails saved-question digests (None: no SMTP server)
    # The archive a job searches (saved questions are re-run through it): `serve`'s own, which embeds queries in
    # this process and keeps their embeddings; a command's, from its settings. None: one made of the writer's stores.
    searcher: Callable[[], Archive] | None = None
    # Whether a user is an admin now (the accounts' table): what only an admin may have a job do, such as a sync of
    # the server's own Zotero desktop, is refused to someone who is not (any more). Unset: nobody is.
    is_admin: Callable[[str], bool] = lambda _user: False
    close: Callable[[], None] = lambda: None  # what ends the context's own encoder and client (`serve`'s worker)
    # The numbers a model's sentence cites as [n], read as the chat's answers are (`assistant.composer.cited_numbers`,
    # which jobs may not import): a saved question's judge reads its sentence with it. None: no judge.
    cited: Callable[[str], list[int]] | None = None

    def fetcher(self) -> AbstractContextManager[PoliteClient]:
        return self.clients() if self.clients is not None else self.sources.fetcher()
