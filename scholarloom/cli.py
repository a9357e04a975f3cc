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
    paths: list[Path] = typer.Argument(
        None, help="PDF files, or folders of them, named <arXiv id>.pdf; none: download from arxiv.org."
    ),
    limit: int = typer.Option(None, min=1, help="Download at most this many PDFs (newest papers first)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Try again PDFs that failed before."),
    timeout: float = typer.Option(60.0, help="Seconds one PDF may take to parse before its worker is stopped."),
    memory_mb: int = typer.Option(1024, help="Memory limit of the PDF worker process, in MB."),
) -> None:
    """Index full text (page-numbered passages) and reference lists (citation edges) of papers' PDFs."""
    from ingest.pdf_worker import PdfLimits
    from ingest.pdfs import download_pdfs, ingest_pdf_files, pdf_files
    from ingest.report import Summary

    settings = _settings()
    limits = PdfLimits(memory_mb=memory_mb, seconds=timeout, max_bytes=settings.sources.pdf_max_bytes)
    if not paths:

        def run(client, summary, progress):
            download_pdfs(settings.catalog(), index, settings.embedder(), client, summary, progress, limits, limit,
                          retry_failed)  # fmt: skip

        index = _open_index(settings)
        _harvest(settings, run, "PDFs", index_after=False)
        return
    index = _open_index(settings)
    missing = [p for p in paths if not p.exists()]
    if missing:
        _fail(f"no such file or folder: {missing[0]}")
    files = pdf_files(paths)
    summary = Summary()
    with _progress() as progress:
        ingest_pdf_files(settings.catalog(), index, settings.embedder(), files, summary, progress, limits)
    _report(settings, summary, f"PDFs: {summary.line()}", "files")
    settings.close()


def _index_changes(settings, index, summary, progress) -> None:
    """After records changed: cross-record work, then embed and index what changed."""
    from ingest.pipeline import finish_catalog, index_papers

    catalog = settings.catalog()
    finish_catalog(catalog)
    index_papers(catalog, index, settings.embedder(), summary, progress)


def _harvest(settings, run, what: str, index_after: bool = True) -> None:
    """Run a harvest with progress bars; a fetch error ends it with the reason (what was stored stays)."""
    from ingest.http import FetchError
    from ingest.report import Summary

    index = _open_index(settings) if index_after else None
    summary = Summary()
    failed = None
    with settings.fetcher() as client, _progress() as progress:
        try:
            run(client, summary, progress)
        except FetchError as exc:
            failed = str(exc)
        if index is not None:
            _index_changes(settings, index, summary, progress)
    _report(settings, summary, f"{what}: {summary.line()}", "records")
    settings.close()
    if failed:
        _fail(f"{failed}\nEverything fetched before this is stored; run the same command again to resume.")


def _date(value: str | None, name: str):
    from datetime import date

    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        _fail(f"{name} must be a date like 2025-01-31, not {value!r}")


@ingest_app.command("arxiv")
def ingest_arxiv(
    query: str = typer.Option(None, help="An arXiv API query, e.g. 'ti:transformer AND abs:retrieval'."),
    category: list[str] = typer.Option([], "--category", "-c", help="A category (repeatable), e.g. cs.CL."),
    since: str = typer.Option(None, help="First submission (API) or change (OAI) date, YYYY-MM-DD."),
    until: str = typer.Option(None, help="Last submission (API) or change (OAI) date, YYYY-MM-DD."),
    oai: bool = typer.Option(False, "--oai", help="Bulk harvest with OAI-PMH ListRecords instead of the API."),
    oai_set: str = typer.Option(None, "--set", help="OAI-PMH set, e.g. cs or physics:hep-th."),
    metadata_format: str = typer.Option("arXiv", "--format", help="OAI-PMH metadata format: arXiv or arXivRaw."),
    limit: int = typer.Option(None, min=1, help="Stop after this many records (a later run continues)."),
    page_size: int = typer.Option(100, min=1, max=2000, help="Entries per API page."),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
) -> None:
    """Harvest arXiv metadata (politely: one request every 3 s), then index the new papers. Resumable."""
    from ingest.harvest.arxiv import ArxivQuery, harvest_api, harvest_oai

    settings = _settings()
    src = settings.sources
    first, last = _date(since, "--since"), _date(until, "--until")
    if oai:
        if metadata_format not in ("arXiv", "arXivRaw"):
            _fail("--format must be arXiv or arXivRaw")

        def run(client, summary, progress):
            harvest_oai(settings.catalog(), client, src.arxiv_oai_url, summary, progress, metadata_format,
                        oai_set, first, last, limit)  # fmt: skip
    else:
        wanted = ArxivQuery(query=query, categories=tuple(category), since=first, until=last)
        try:
            wanted.search_query()
        except ValueError as exc:
            _fail(f"{exc} (--query, --category, --since/--until)")

        def run(client, summary, progress):
            harvest_api(settings.catalog(), client, src.arxiv_api_url, wanted, summary, progress, page_size, limit)

    _harvest(settings, run, "arXiv", index_after=not no_index)


@ingest_app.command("openalex")
def ingest_openalex(
    refresh: bool = typer.Option(False, "--refresh", help="Ask again about papers asked about before."),
    limit: int = typer.Option(None, min=1, help="Ask about at most this many papers."),
    no_references: bool = typer.Option(False, "--no-references", help="Do not look up the titles of cited works."),
    no_entities: bool = typer.Option(
        False, "--no-entities", help="Do not fetch the full records of the authors and institutions named."
    ),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
) -> None:
    """Enrich arXiv papers from OpenAlex: author ids and ORCIDs, institutions (ROR), references, cited-by counts."""
    from ingest.harvest.openalex import OpenAlex, enrich_entities, enrich_papers, name_references

    settings = _settings()
    src = settings.sources
    key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None

    def run(client, summary, progress):
        api = OpenAlex(client, src.openalex_url, src.contact_email, key)
        if budget := api.budget():
            typer.echo(f"OpenAlex budget left today: ${budget.get('daily_remaining_usd')}")
        enrich_papers(settings.catalog(), api, summary, progress, refresh, limit)
        if not no_references:
            name_references(settings.catalog(), api, summary, progress)
        if not no_entities:
            enrich_entities(settings.catalog(), api, summary, progress, refresh)

    _harvest(settings, run, "OpenAlex", index_after=not no_index)


@ingest_app.command("s2")
def ingest_s2(
    refresh: bool = typer.Option(False, "--refresh", help="Ask again about papers asked about before."),
    limit: int = typer.Option(None, min=1, help="Ask about at most this many papers."),
    no_references: bool = typer.Option(False, "--no-references", help="Do not fetch each paper's references."),
    citations: bool = typer.Option(False, "--citations", help="Also fetch who cites each paper (edges in the corpus)."),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
) -> None:
    """Enrich papers from Semantic Scholar (by ARXIV:<id>, batch endpoint): author ids, references, citations."""
    from ingest.harvest.s2 import SemanticScholar, enrich_papers

    settings = _settings()
    src = settings.sources
    key = src.s2_api_key.get_secret_value() if src.s2_api_key else None

    def run(client, summary, progress):
        api = SemanticScholar(client, src.s2_url, key)
        enrich_papers(settings.catalog(), api, summary, progress, refresh, not no_references, limit, citations)

    _harvest(settings, run, "Semantic Scholar", index_after=not no_index)


def _analyser(settings):
    """The `ask` function of the analysis step, or None in retrieval-only mode."""
    config = settings.llm_config()
    if config is None:
        return None
    from dataclasses import replace

    from assistant.llm import complete

    config = replace(config, max_tokens=max(config.max_tokens, 600))
    return lambda messages: complete(config, messages, json_object=True)


@ingest_app.command("analyse")
def ingest_analyse(
    limit: int = typer.Option(None, min=1, help="Analyse at most this many papers (newest first)."),
    refresh: bool = typer.Option(False, "--refresh", help="Analyse papers already analysed, again."),
) -> None:
    """Fill each paper's summary, topics, type, field, novelty and significance with the configured LLM."""
    from assistant.llm import LLMError
    from ingest.analyse import analyse_papers
    from ingest.report import Summary

    settings = _settings()
    ask = _analyser(settings)
    if ask is None:
        _fail("no LLM is configured: set SCHOLARLOOM_LLM (e.g. openai/gpt-4o-mini or ollama_chat/qwen2.5)")
    summary = Summary()
    with _progress() as progress:
        analyse_papers(settings.catalog(), ask, summary, progress, limit, refresh, unavailable=LLMError)
    _report(settings, summary, f"analysis: {summary.line()}", "papers")
    settings.close()


@ingest_app.command("update")
def ingest_update(
    oai_set: str = typer.Option("cs", "--set", help="OAI-PMH set to follow, e.g. cs, math or physics:hep-th."),
    days: int = typer.Option(3, min=1, help="On the first run, how many days back to start."),
    openalex: bool = typer.Option(True, "--openalex/--no-openalex", help="Enrich new papers from OpenAlex."),
    s2: bool = typer.Option(False, "--s2/--no-s2", help="Enrich new papers from Semantic Scholar."),
    pdfs: int = typer.Option(0, min=0, help="Download and index at most this many new PDFs."),
    analyse: bool = typer.Option(True, "--analyse/--no-analyse", help="Analyse new papers when an LLM is set."),
) -> None:
    """The incremental run for cron: new arXiv records since the last harvest, enrichment, index, PDFs, analysis.

    Each step reports its own result; a failing step does not stop the ones after it.
    """
    from datetime import date, timedelta

    from assistant.llm import LLMError
    from ingest.analyse import analyse_papers
    from ingest.harvest.arxiv import harvest_oai, oai_last_name
    from ingest.harvest.openalex import OpenAlex, enrich_entities
    from ingest.harvest.openalex import enrich_papers as openalex_enrich
    from ingest.harvest.s2 import SemanticScholar
    from ingest.harvest.s2 import enrich_papers as s2_enrich
    from ingest.http import FetchError
    from ingest.pdf_worker import PdfLimits
    from ingest.pdfs import download_pdfs
    from ingest.report import Summary

    settings = _settings()
    src = settings.sources
    catalog = settings.catalog()
    index = _open_index(settings)
    last = (catalog.cursor(oai_last_name(oai_set)) or {}).get("datestamp")
    since = date.fromisoformat(last[:10]) if last else date.today() - timedelta(days=days)
    summary = Summary()
    problems: list[str] = []
    openalex_key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None
    s2_key = src.s2_api_key.get_secret_value() if src.s2_api_key else None
    steps = [
        ("arXiv OAI-PMH", lambda c, p: harvest_oai(catalog, c, src.arxiv_oai_url, summary, p, "arXiv", oai_set, since))
    ]
    if openalex:
        api = lambda c: OpenAlex(c, src.openalex_url, src.contact_email, openalex_key)  # noqa: E731
        steps.append(("OpenAlex", lambda c, p: openalex_enrich(catalog, api(c), summary, p)))
        steps.append(("OpenAlex entities", lambda c, p: enrich_entities(catalog, api(c), summary, p)))
    if s2:
        steps.append(
            ("Semantic Scholar", lambda c, p: s2_enrich(catalog, SemanticScholar(c, src.s2_url, s2_key), summary, p))
        )
    steps.append(("index", lambda c, p: _index_changes(settings, index, summary, p)))
    if pdfs:
        limits = PdfLimits(max_bytes=src.pdf_max_bytes)
        steps.append(
            ("PDFs", lambda c, p: download_pdfs(catalog, index, settings.embedder(), c, summary, p, limits, pdfs))
        )
    ask = _analyser(settings) if analyse else None
    if ask is not None:
        steps.append(("analysis", lambda c, p: analyse_papers(catalog, ask, summary, p, unavailable=LLMError)))
    typer.echo(f"update: arXiv set {oai_set} from {since.isoformat()}")
    with settings.fetcher() as client, _progress() as progress:
        for name, step in steps:
            try:
                step(client, progress)
            except (FetchError, LLMError) as exc:
                problems.append(f"{name}: {exc}")
    _report(settings, summary, f"update: {summary.line()}", "records")
    settings.close()
    if problems:
        _fail("some steps did not finish (a rerun resumes them):\n  " + "\n  ".join(problems))


@app.command()
def serve(
    host: str = typer.Option(None, help="Address to listen on (default SCHOLARLOOM_HOST)."),
    port: int = typer.Option(None, help="Port to listen on (default SCHOLARLOOM_PORT)."),
) -> None:
    """Start the web app: pages, API and the chat at /chat."""
    import uvicorn

    from scholarloom.app import create_app, server_config

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
    uvicorn.Server(server_config(settings, application)).run()


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


@users_app.command("unblock")
def users_unblock(
    name: str = typer.Argument(None, help="The user whose sign-in back-off to lift."),
    everyone: bool = typer.Option(False, "--all", help="Lift every back-off: all users and all addresses."),
) -> None:
    """Let a user (or everyone) sign in again now, after repeated wrong passwords started a back-off."""
    from auth.accounts import clear_sign_in_failures, create_tables

    if (name is None) == (not everyone):
        _fail("name one user, or pass --all")
    engine = _settings().catalog().engine
    create_tables(engine)
    lifted = clear_sign_in_failures(engine, None if everyone else name)
    typer.echo(f"forgot the failed sign-ins of {lifted} {'name or address' if lifted == 1 else 'names and addresses'}")


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
