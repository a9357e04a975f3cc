"""What a job runs with, typed: the stores it writes through (`ingest.writer.Writer`), where the services and the
index are, its limits, the model of the analysis step, and how it gets its HTTP client. The composition root builds
one (`Settings.job_context`): a command for its own run, `serve` for its worker. Nothing here reads the settings."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.http import PoliteClient
from ingest.pdf_worker import PdfLimits
from ingest.report import Summary
from ingest.sources import SourceSettings
from ingest.writer import Writer
from retrieval.library.uploads import UploadLimits, Uploads
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


@dataclass(frozen=True)
class Limits:
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
    limits: Limits = Limits()
    backups: Backups = Backups({})
    analyst: Analyst | None = None  # None: no model is configured (retrieval-only mode)
    # Makes the HTTP client a job fetches with. `serve` hands every job one long-lived polite client, so arXiv's
    # 3 s between requests holds across jobs too; tests replay recorded answers through it.
    clients: Callable[[], AbstractContextManager[PoliteClient]] | None = None
    sealer: Any = None  # retrieval.library.zotero.Sealer: opens the Zotero keys users connected (the server's secret)
    post: Any = None  # jobs.digests.DigestPost: mails saved-question digests (None: no SMTP server)
    # The archive a job searches (saved questions are re-run through it): `serve`'s own, which embeds queries in
    # this process and keeps their embeddings; a command's, from its settings. None: one made of the writer's stores.
    searcher: Callable[[], Any] | None = None
    # Whether a user is an admin now (the accounts' table): what only an admin may have a job do, such as a sync of
    # the server's own Zotero desktop, is refused to someone who is not (any more). Unset: nobody is.
    is_admin: Callable[[str], bool] = lambda _user: False
    close: Callable[[], None] = lambda: None  # what ends the context's own encoder and client (`serve`'s worker)

    def fetcher(self) -> AbstractContextManager[PoliteClient]:
        return self.clients() if self.clients is not None else self.sources.fetcher()


Kind = Callable[[JobContext, dict, Summary, object], "str | None"]


@dataclass(frozen=True)
class KindInfo:
    run: Kind
    label: str  # how the closing line starts: "<label>: added 3, ..."
    things: str  # what a failure skipped
    tally: bool = True  # its closing line counts records (added, updated...); else its note says what it did
