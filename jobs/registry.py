"""Every kind of job, declared once: what it takes (its arguments' dataclass, `jobs.arguments`), the function that
runs it, how its closing line reads, and the job that follows it.

`run_job` is the one way a job runs: a command runs its kind here (`scholarloom.cli.run.execute`) and `serve`'s
worker (`jobs.runner.JobRunner`, built by `job_runner`) runs each queued job through it; the follow-ups declared
here are queued by the worker and run by a command in its own process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from common.stored import StoredArguments
from ingest.report import Summary
from jobs.arguments import (
    AnalyseArguments,
    ArxivArguments,
    BackupArguments,
    DemoArguments,
    JobKind,
    OpenAlexArguments,
    PaperArguments,
    PdfsArguments,
    RebuildArguments,
    ReferencesArguments,
    S2Arguments,
    SnapshotArguments,
    UpdateArguments,
    UploadArguments,
    WatchesArguments,
    ZoteroArguments,
)
from jobs.context import JobContext, Progress
from jobs.kinds import (
    run_analyse,
    run_arxiv,
    run_demo,
    run_openalex,
    run_paper,
    run_pdfs,
    run_references,
    run_s2,
    run_snapshot,
    run_update,
    run_upload,
)
from jobs.queue import JobQueue
from jobs.runner import FollowUp, JobRunner, RunKind, Schedule
from jobs.upkeep import run_backup, run_rebuild
from jobs.watches import run_watches
from jobs.zotero import sync_zotero


@dataclass(frozen=True)
class KindSpec:
    arguments: type[StoredArguments]
    run: Callable[[JobContext, Any, Summary, Progress], str | None]  # (its `arguments`); returns a closing note
    label: str  # how the closing line starts: "<label>: added 3, ..."
    things: str  # what a failure skipped
    tally: bool = True  # its closing line counts records (added, updated...); else its note says what it did
    follow_up: FollowUp | None = None


# A job that brought papers or passages is followed by one run of the saved questions (shared while it waits): of
# every question, for public papers; of the asker's own, for what only they can see (their PDFs, their Zotero).
WATCH_ALL = FollowUp(JobKind.WATCHES, lambda _asker: WatchesArguments())
WATCH_OWN = FollowUp(JobKind.WATCHES, lambda asker: WatchesArguments(owner=asker), here=False)

REGISTRY: dict[JobKind, KindSpec] = {
    JobKind.DEMO: KindSpec(DemoArguments, run_demo, "demo corpus", "records", follow_up=WATCH_ALL),
    JobKind.PDFS: KindSpec(PdfsArguments, run_pdfs, "PDFs", "files", follow_up=WATCH_ALL),
    JobKind.ARXIV: KindSpec(ArxivArguments, run_arxiv, "arXiv", "records", follow_up=WATCH_ALL),
    JobKind.OPENALEX: KindSpec(OpenAlexArguments, run_openalex, "OpenAlex", "records"),
    JobKind.S2: KindSpec(S2Arguments, run_s2, "Semantic Scholar", "records"),
    JobKind.ANALYSE: KindSpec(AnalyseArguments, run_analyse, "analysis", "papers"),
    JobKind.UPDATE: KindSpec(UpdateArguments, run_update, "update", "records", follow_up=WATCH_ALL),
    JobKind.SNAPSHOT: KindSpec(SnapshotArguments, run_snapshot, "arXiv snapshot", "records", follow_up=WATCH_ALL),
    JobKind.PAPER: KindSpec(PaperArguments, run_paper, "paper", "records", follow_up=WATCH_ALL),
    JobKind.REFERENCES: KindSpec(ReferencesArguments, run_references, "references", "papers", follow_up=WATCH_ALL),
    JobKind.UPLOAD: KindSpec(UploadArguments, run_upload, "upload", "files", follow_up=WATCH_OWN),
    JobKind.ZOTERO: KindSpec(ZoteroArguments, sync_zotero, "Zotero", "items", follow_up=WATCH_OWN),
    JobKind.WATCHES: KindSpec(WatchesArguments, run_watches, "saved questions", "questions"),
    JobKind.BACKUP: KindSpec(BackupArguments, run_backup, "backup", "items", tally=False),
    JobKind.REBUILD: KindSpec(RebuildArguments, run_rebuild, "index rebuild", "points", tally=False),
}
FOLLOW_UPS: dict[JobKind, FollowUp] = {kind: k.follow_up for kind, k in REGISTRY.items() if k.follow_up is not None}


def run_job(ctx: JobContext, kind: str, arguments: StoredArguments | Mapping[str, Any], summary: Summary,
            progress: Progress) -> str | None:  # fmt: skip
    """Run one job of `kind` with `ctx` (its arguments typed, or as a row holds them); returns its closing note."""
    declared = REGISTRY[JobKind(kind)]
    if not isinstance(arguments, declared.arguments):
        arguments = declared.arguments.from_stored(arguments)
    return declared.run(ctx, arguments, summary, progress)


def bound_kinds(ctx: JobContext) -> dict[str, RunKind]:
    """Each kind with its context bound: what `jobs.runner.JobRunner` calls with (arguments, summary, progress)."""
    return {kind: partial(run_job, ctx, kind) for kind in REGISTRY}


def job_runner(queue: JobQueue, ctx: JobContext, schedule: Schedule | None = None, **options) -> JobRunner:
    """`serve`'s worker: every kind, run with `ctx` (closed with the worker), each followed as declared here."""
    return JobRunner(queue, bound_kinds(ctx), schedule=schedule, on_close=ctx.close, follow_ups=FOLLOW_UPS, **options)
