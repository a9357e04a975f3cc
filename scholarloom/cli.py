"""The `scholarloom` command: ingest, serve, users, models."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import typer

app = typer.Typer(help="ScholarLoom: chat with research papers.", no_args_is_help=True, add_completion=False)
ingest_app = typer.Typer(help="Fill the catalog and the index.", no_args_is_help=True)
users_app = typer.Typer(help="Manage user accounts.", no_args_is_help=True)
models_app = typer.Typer(help="Prepare the embedding models (offline).", no_args_is_help=True)
bench_app = typer.Typer(help="Measure retrieval quality.", no_args_is_help=True)
app.add_typer(ingest_app, name="ingest")
app.add_typer(bench_app, name="bench")
app.add_typer(users_app, name="users")
app.add_typer(models_app, name="models")


def _settings():
    from scholarloom.settings import Settings

    return Settings()


def _fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(1)


def _open_index(settings):
    from retrieval.index import IndexUnavailable

    try:
        return settings.index()
    except IndexUnavailable as exc:
        _fail(f"{exc}\nIs `scholarloom serve` running? The embedded index can only be open in one process.")


def _report(settings, summary, line: str, things: str) -> None:
    """The run's closing line; skipped items go to the failures file the user can read."""
    failures = summary.write_failures(settings.data_dir / "ingest-failures.jsonl")
    typer.echo(line)
    if summary.failures:
        typer.echo(f"{len(summary.failures)} {things} were skipped; reasons in {failures}")


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log more.")) -> None:
    # litellm otherwise fetches a model cost map from the internet when it is first imported.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


@ingest_app.command("demo")
def ingest_demo(
    source: Path = typer.Option(None, help="Folder of the demo corpus (default: the bundled data/demo)."),
) -> None:
    """Load the bundled demo corpus into the catalog and the index (idempotent)."""
    from ingest.demo import DEMO_DIR, load_demo
    from retrieval.index import Filters

    settings = _settings()
    index = _open_index(settings)
    root = source or DEMO_DIR
    if not root.is_dir():
        _fail(f"no demo corpus at {root}")
    with _progress() as progress:
        summary = load_demo(settings.catalog(), index, settings.embedder(), root, progress)
    _report(settings, summary, f"demo corpus: {summary.line()}", "records")
    counts = settings.catalog().counts()
    kinds = {kind: index.count(Filters(kinds=(kind,))) for kind in ("abstract", "window", "passage")}
    typer.echo(
        "catalog: "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + f"; index points {sum(kinds.values())} ({kinds['abstract']} abstracts, {kinds['window']} windows, "
        + f"{kinds['passage']} passages)"
    )
    settings.close()


@ingest_app.command("pdfs")
def ingest_pdfs(
    paths: list[Path] = typer.Argument(..., help="PDF files, or folders of them, named <arXiv id>.pdf."),
    timeout: float = typer.Option(60.0, help="Seconds one PDF may take to parse before its worker is stopped."),
    memory_mb: int = typer.Option(1024, help="Memory limit of the PDF worker process, in MB."),
) -> None:
    """Index the full text of local PDFs beside their papers' abstracts (page-numbered passages)."""
    from ingest.pdf_worker import PdfLimits
    from ingest.pdfs import ingest_pdf_files, pdf_files
    from ingest.report import Summary

    settings = _settings()
    index = _open_index(settings)
    missing = [p for p in paths if not p.exists()]
    if missing:
        _fail(f"no such file or folder: {missing[0]}")
    files = pdf_files(paths)
    summary = Summary()
    with _progress() as progress:
        ingest_pdf_files(
            settings.catalog(),
            index,
            settings.embedder(),
            files,
            summary,
            progress,
            PdfLimits(memory_mb=memory_mb, seconds=timeout),
        )
    _report(settings, summary, f"PDFs: {summary.line()}, passages {summary.counts.get('passages', 0)}", "files")
    settings.close()


@app.command()
def serve(
    host: str = typer.Option(None, help="Address to listen on (default SCHOLARLOOM_HOST)."),
    port: int = typer.Option(None, help="Port to listen on (default SCHOLARLOOM_PORT)."),
) -> None:
    """Start the web app: pages, API and the chat at /chat."""
    import uvicorn

    from scholarloom.app import create_app

    settings = _settings()
    if host:
        settings.host = host
    if port:
        settings.port = port
    try:
        settings.require_secret()
        application = create_app(settings)
    except RuntimeError as exc:
        _fail(str(exc))
    mode = f"LLM {settings.llm}" if settings.llm else "retrieval-only mode (set SCHOLARLOOM_LLM for written answers)"
    typer.echo(f"ScholarLoom on http://{settings.host}:{settings.port} ({mode})")
    uvicorn.run(application, host=settings.host, port=settings.port, log_level="warning")


@users_app.command("add")
def users_add(
    name: str = typer.Argument(..., help="User name (letters, digits, . _ @ -)."),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="Read the password from standard input."),
    replace: bool = typer.Option(False, "--replace", help="Set a new password if the user exists."),
) -> None:
    """Create a user who can sign in to the chat."""
    from auth.accounts import AccountError, add_user, create_tables

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    settings = _settings()
    engine = settings.catalog().engine
    create_tables(engine)
    try:
        add_user(engine, name, password, replace=replace)
    except AccountError as exc:
        _fail(str(exc))
    typer.echo(f"user {name} is ready")


@models_app.command("prepare")
def models_prepare() -> None:
    """Build the ONNX embedding model from the installed weights package (no network)."""
    from retrieval.embeddings import prepare_models

    dense, sparse = prepare_models(_settings().models_dir)
    typer.echo(f"dense model: {dense}\nBM25: {sparse}")


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description:<44}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    return Progress(*columns, transient=False)


@bench_app.command("retrieval")
def bench_retrieval(
    beir_dir: Path = typer.Argument(..., help="A BEIR data set folder: corpus.jsonl, queries.jsonl, qrels/*.tsv."),
    split: list[str] = typer.Option(["test"], "--split", help="Which qrels to score (repeatable): test, train."),
    work_dir: Path = typer.Option(
        None, help="Where to keep the benchmark's catalog and index (reused when run again; default: data dir)."
    ),
    method: str = typer.Option("max", help="Score fusion: max, minmax or rrf."),
    dense_weight: float = typer.Option(None, help="Weight of the dense side in the hybrid (default: the product's)."),
    window_tokens: int = typer.Option(None, help="Dense window size for abstracts (default: the product's)."),
    window_overlap: bool = typer.Option(None, "--window-overlap/--no-window-overlap", help="Half-overlapping windows."),
) -> None:
    """nDCG@10, Recall@100 and MRR@10 for BM25, dense and hybrid search on a BEIR data set (e.g. SciFact)."""
    from ingest.pipeline import Windowing
    from retrieval.fusion import FusionParams
    from scholarloom.benchmarks import retrieval_benchmark

    settings = _settings()
    if not (beir_dir / "corpus.jsonl").is_file():
        _fail(f"no corpus.jsonl in {beir_dir}")
    defaults = FusionParams()
    params = FusionParams(method=method, dense_weight=defaults.dense_weight if dense_weight is None else dense_weight)
    windowing = Windowing()
    windowing = Windowing(
        tokens=window_tokens or windowing.tokens,
        overlap=windowing.overlap if window_overlap is None else window_overlap,
    )
    work = work_dir or settings.data_dir / "bench" / beir_dir.name
    with _progress() as progress:
        try:
            results = retrieval_benchmark(beir_dir, work, settings.models_dir, split, params, progress, windowing)
        except ValueError as exc:
            _fail(str(exc))
    typer.echo(
        f"fusion: {params.method}, dense weight {params.dense_weight}, candidates {params.candidates}; "
        f"windows: {windowing.tokens} tokens, {'half-overlapping' if windowing.overlap else 'no overlap'}"
    )
    for name, rows in results.items():
        typer.echo(f"\n{beir_dir.name} {name} ({work})\n{'':8} nDCG@10  Recall@100  MRR@10")
        for mode, s in rows.items():
            typer.echo(f"{mode:8} {s.ndcg10:7.4f}  {s.recall100:10.4f}  {s.mrr10:6.4f}")


if __name__ == "__main__":  # pragma: no cover
    app()
