"""Running an ingest command: in this process, or, when `serve` holds the embedded index, as a job of that server
followed here with the same progress bars and closing lines. `scholarloom jobs` lists, shows, cancels and retries."""

from __future__ import annotations

import time
from collections import Counter
from contextlib import closing
from typing import TYPE_CHECKING

import typer

from scholarloom.cli.common import app, fail, load_settings, progress, report

if TYPE_CHECKING:  # pragma: no cover
    from common.stored import StoredArguments
    from jobs.arguments import JobKind

jobs_app = typer.Typer(help="Jobs run by the server: ingest runs handed over, papers fetched on request, updates.")
app.add_typer(jobs_app, name="jobs")


def _finish(settings, info, summary, note: str | None, error: str | None) -> None:
    if info.tally:
        report(settings, summary, f"{info.label}: {summary.line()}", info.things)
    elif not error:
        typer.echo(f"{info.label}: done")
    if note:
        typer.echo(note)
    if error:
        fail(error)


def execute(kind: JobKind, arguments: StoredArguments, detach: bool = False) -> None:
    """Run one kind of job here, or hand it to the server that holds the index."""
    from ingest.report import Summary
    from jobs.context import JobIncomplete
    from jobs.queue import JobQueue
    from jobs.registry import REGISTRY, run_job
    from retrieval.vectors.index import IndexUnavailable

    info = REGISTRY[kind]
    with closing(load_settings()) as settings:
        try:
            index = settings.index()
        except IndexUnavailable as exc:
            queue = JobQueue(settings.catalog().engine)
            if queue.worker_alive() is None:
                fail(f"{exc}\nNo server is taking jobs: is another `scholarloom` command using the index?")
            _hand_off(settings, queue, kind, arguments, detach)
            return
        summary, note, error = Summary(), None, None
        context = settings.job_context(index)
        with progress() as bars:
            try:
                note = run_job(context, kind, arguments, summary, bars)
            except JobIncomplete as exc:
                error = str(exc)
            then = info.follow_up  # what `serve` queues after such a job, run here: the saved questions
            if then is not None and then.here and not error:
                followed = run_job(context, then.kind, then.arguments("cli"), Summary(), bars)
                note = f"{note}\n{followed}" if note else followed
        _finish(settings, info, summary, note, error)


def _hand_off(settings, queue, kind: JobKind, arguments: StoredArguments, detach: bool) -> None:
    from ingest.report import Failure, Summary
    from jobs.queue import JobState
    from jobs.registry import REGISTRY

    job, _ = queue.submit(kind, arguments, asked_by="cli")
    typer.echo(f"scholarloom serve holds the index: this runs there as job {job.id}.")
    if detach:
        typer.echo(f"Follow it with `scholarloom jobs show {job.id}`; stop it with `scholarloom jobs cancel {job.id}`.")
        return
    try:
        done = follow(queue, job.id)
    except KeyboardInterrupt:
        fail(f"stopped following; job {job.id} goes on in the server (`scholarloom jobs cancel {job.id}` stops it)")
    summary = Summary(Counter(done.counts), [Failure(**f) for f in done.failures])
    error = done.error if done.state == JobState.FAILED else None
    if done.state == JobState.CANCELLED:
        error = f"job {job.id} was cancelled; what it stored stays, and running it again resumes it"
    _finish(settings, REGISTRY[kind], summary, done.note, error)


def follow(queue, job_id: int, poll: float = 0.5):
    """Mirror the job's progress into progress bars until it ends; returns the ended job."""
    from jobs.queue import JobState

    shown: dict[int, int] = {}
    with progress() as bars:
        while True:
            job = queue.get(job_id)
            for number, task in enumerate(job.progress):
                if number not in shown:
                    shown[number] = bars.add_task(task["description"], total=task["total"])
                bars.update(shown[number], completed=task["completed"], total=task["total"])
            if not JobState(job.state).live:
                return job
            time.sleep(poll)


def _queue(settings):
    from jobs.queue import JobQueue

    return JobQueue(settings.catalog().engine)


def _line(job) -> str:
    done = ", ".join(f"{t['description']} {t['completed']:g}/{t['total'] or '?'}" for t in job.progress[-2:])
    when = job.created_at.strftime("%Y-%m-%d %H:%M")
    error = f"  error: {job.error.splitlines()[0]}" if job.error else ""
    return f"{job.id:>5}  {job.state:<9}  {job.kind:<9} {when}  by {job.asked_by:<12} {done}{error}"


@jobs_app.command("list")
def jobs_list(limit: int = typer.Option(20, min=1, max=500, help="How many of the newest jobs.")) -> None:
    """The newest jobs: state, kind, when, who asked, progress, error."""
    with closing(load_settings()) as settings:
        jobs = _queue(settings).recent(limit)
    if not jobs:
        typer.echo("no jobs yet")
    for job in jobs:
        typer.echo(_line(job))


@jobs_app.command("show")
def jobs_show(job_id: int) -> None:
    """One job, followed until it ends when it is still running."""
    from jobs.queue import JobState

    with closing(load_settings()) as settings:
        queue = _queue(settings)
        job = queue.get(job_id)
        if job is None:
            fail(f"no job {job_id}")
        if JobState(job.state).live:
            job = follow(queue, job_id)
        typer.echo(_line(job))
        if job.counts:
            typer.echo("counts: " + ", ".join(f"{k} {v}" for k, v in sorted(job.counts.items())))
        if job.note:
            typer.echo(job.note)


@jobs_app.command("cancel")
def jobs_cancel(job_id: int) -> None:
    """Cancel a queued job now, a running one at its next step (what it stored stays)."""
    with closing(load_settings()) as settings:
        job = _queue(settings).cancel(job_id)
    if job is None:
        fail(f"no job {job_id}")
    typer.echo(f"job {job_id}: {job.state}" + (" (stops at its next step)" if job.state == "running" else ""))


@jobs_app.command("retry")
def jobs_retry(job_id: int) -> None:
    """Queue a failed or cancelled job again (a new job with the same arguments)."""
    with closing(load_settings()) as settings:
        again = _queue(settings).retry(job_id, asked_by="cli")
    if again is None:
        fail(f"job {job_id} does not exist or has not ended")
    job, new = again
    typer.echo(f"job {job.id} queued" if new else f"job {job.id} is already queued or running")
