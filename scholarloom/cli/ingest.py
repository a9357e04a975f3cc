"""`scholarloom ingest demo | snapshot | pdfs | analyse | update`: the bundled corpus, arXiv's bulk metadata file,
full text, analysis, the cron run."""

from __future__ import annotations

from pathlib import Path

import typer

from scholarloom.cli.common import fail, ingest_app
from scholarloom.cli.harvest import DETACH
from scholarloom.cli.run import execute


@ingest_app.command("demo")
def ingest_demo(
    source: Path = typer.Option(None, help="Folder of the demo corpus (default: the bundled data/demo)."),
    write_vectors: bool = typer.Option(
        False, help="Write the corpus's vector book from this load (needs an empty data directory)."
    ),
    detach: bool = DETACH,
) -> None:
    """Load the bundled demo corpus into the catalog and the index (idempotent)."""
    from ingest.demo import DEMO_DIR

    root = (source or DEMO_DIR).resolve()
    if not root.is_dir():
        fail(f"no demo corpus at {root}")
    from jobs.arguments import DemoArguments, JobKind

    execute(JobKind.DEMO, DemoArguments(str(root), write_vectors), detach)


@ingest_app.command("snapshot")
def ingest_snapshot(
    path: Path = typer.Argument(..., help="arXiv's metadata snapshot: JSON lines, plain or gzip."),
    category: list[str] = typer.Option(
        None, "--category", help="Keep papers with a category starting with this (cs. or cs.CL); repeatable."
    ),
    since: str = typer.Option(None, help="Keep papers whose first version is from this day on (YYYY-MM-DD)."),
    until: str = typer.Option(None, help="Keep papers whose first version is up to this day (YYYY-MM-DD)."),
    limit: int = typer.Option(None, min=1, help="Stop after this many kept records (a trial run)."),
    index: bool = typer.Option(True, "--index/--no-index", help="Embed and index the new papers afterwards."),
    detach: bool = DETACH,
) -> None:
    """Import arXiv's bulk metadata snapshot, streamed in constant memory; a killed run resumes after its last
    committed line, and a later snapshot updates only the papers that changed."""
    from datetime import date

    if not path.is_file():
        fail(f"no such file: {path}")
    for value in (since, until):
        try:
            value and date.fromisoformat(value)
        except ValueError:
            fail(f"not a day (YYYY-MM-DD): {value}")
    from jobs.arguments import JobKind, SnapshotArguments

    arguments = SnapshotArguments(str(path.resolve()), tuple(category or ()), since, until, limit, index)
    execute(JobKind.SNAPSHOT, arguments, detach)


@ingest_app.command("pdfs")
def ingest_pdfs(
    paths: list[Path] = typer.Argument(
        None, help="PDF files, or folders of them, named <arXiv id>.pdf; none: download from arxiv.org."
    ),
    limit: int = typer.Option(None, min=1, help="Download at most this many PDFs (newest papers first)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Try again PDFs that failed before."),
    timeout: float = typer.Option(60.0, help="Seconds one PDF may take to parse before its worker is stopped."),
    memory_mb: int = typer.Option(1024, help="Memory limit of the PDF worker process, in MB."),
    detach: bool = DETACH,
) -> None:
    """Index full text (page-numbered passages) and reference lists (citation edges) of papers' PDFs."""
    missing = [p for p in paths or [] if not p.exists()]
    if missing:
        fail(f"no such file or folder: {missing[0]}")
    from jobs.arguments import JobKind, PdfsArguments

    arguments = PdfsArguments(tuple(str(p.resolve()) for p in paths or ()), limit, retry_failed, timeout, memory_mb)
    execute(JobKind.PDFS, arguments, detach)


@ingest_app.command("analyse")
def ingest_analyse(
    limit: int = typer.Option(None, min=1, help="Analyse at most this many papers (newest first)."),
    refresh: bool = typer.Option(False, "--refresh", help="Analyse papers already analysed, again."),
    detach: bool = DETACH,
) -> None:
    """Fill each paper's summary, topics, type, field, novelty and significance with the configured LLM."""
    from scholarloom.cli.common import load_settings

    settings = load_settings()
    configured = settings.llm_config() is not None
    settings.close()
    if not configured:
        fail("no LLM is configured: set SCHOLARLOOM_LLM (e.g. openai/gpt-4o-mini or ollama_chat/qwen2.5)")
    from jobs.arguments import AnalyseArguments, JobKind

    execute(JobKind.ANALYSE, AnalyseArguments(limit, refresh), detach)


@ingest_app.command("update")
def ingest_update(
    oai_set: str = typer.Option("cs", "--set", help="OAI-PMH set to follow, e.g. cs, math or physics:hep-th."),
    days: int = typer.Option(3, min=1, help="On the first run, how many days back to start."),
    openalex: bool = typer.Option(True, "--openalex/--no-openalex", help="Enrich new papers from OpenAlex."),
    s2: bool = typer.Option(False, "--s2/--no-s2", help="Enrich new papers from Semantic Scholar."),
    pdfs: int = typer.Option(0, min=0, help="Download and index at most this many new PDFs."),
    analyse: bool = typer.Option(True, "--analyse/--no-analyse", help="Analyse new papers when an LLM is set."),
    detach: bool = DETACH,
) -> None:
    """The incremental run for cron: new arXiv records since the last harvest, enrichment, index, PDFs, analysis.

    Each step reports its own result; a failing step does not stop the ones after it. `serve` can run the same
    steps itself on a schedule (SCHOLARLOOM_UPDATE_EVERY).
    """
    from jobs.arguments import JobKind, UpdateArguments

    execute(JobKind.UPDATE, UpdateArguments(oai_set, days, openalex, s2, pdfs, analyse), detach)
