"""The kinds of job: each `scholarloom ingest` command's work, as a function of JSON arguments.

The same function runs in the command's own process (no server holds the index, or the index is a Qdrant server)
and in `serve`'s job worker (the command handed its job over). This module only wires settings into the ingest
functions; the queue is `retrieval.jobs`, the worker `ingest.jobs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from ingest.report import Summary
from scholarloom.maintenance import run_backup, run_rebuild


class JobIncomplete(RuntimeError):
    """The job stopped early (a service failed); what it stored stays, and running it again resumes it."""


@dataclass(frozen=True)
class JobContext:
    settings: object  # scholarloom.settings.Settings
    index: object  # retrieval.index.Index
    embedder: object  # the worker's own encoder in `serve`, the settings' one in a command
    # Makes the HTTP client a job fetches with (a context manager). `serve` hands every job one long-lived polite
    # client, so arXiv's 3 s between requests holds across jobs too; tests replay recorded answers through it.
    clients: Callable | None = None
    close: Callable[[], None] = lambda: None  # what ends the context's own encoder and client (`serve`'s worker)

    @property
    def catalog(self):
        return self.settings.catalog()

    def fetcher(self):
        return self.clients() if self.clients is not None else self.settings.fetcher()


Kind = Callable[[JobContext, dict, Summary, object], "str | None"]


def index_changes(ctx: JobContext, summary: Summary, progress) -> None:
    """After records changed: cross-record work, then embed and index what changed."""
    from ingest.indexing import index_papers
    from ingest.pipeline import finish_catalog

    finish_catalog(ctx.catalog)
    index_papers(ctx.catalog, ctx.index, ctx.embedder, summary, progress, batch=ctx.settings.index_batch)


def _fetching(ctx: JobContext, summary: Summary, progress, fetch: Callable, index_after: bool = True) -> None:
    """Run `fetch(client, progress)`; a fetch error ends it (what was stored stays) but the index still catches up."""
    from ingest.http import FetchError

    failed = None
    with ctx.fetcher() as client:
        try:
            fetch(client, progress)
        except FetchError as exc:
            failed = str(exc)
    if index_after:
        index_changes(ctx, summary, progress)
    if failed:
        raise JobIncomplete(f"{failed}\nEverything fetched before this is stored; run the same command again to resume.")


def _day(value: str | None) -> date | None:
    return date.fromisoformat(value) if value else None


def run_demo(ctx: JobContext, args: dict, summary: Summary, progress) -> str:
    from ingest.demo import DEMO_DIR, load_demo
    from retrieval.library import Library

    root = Path(args["source"]) if args.get("source") else DEMO_DIR
    if args.get("write_vectors") and ctx.index.count():
        raise JobIncomplete(f"--write-vectors needs an empty data directory; {ctx.settings.data_dir} holds an index")
    loaded = load_demo(ctx.catalog, ctx.index, ctx.embedder, root, progress, write_vectors=bool(args.get("write_vectors")))
    summary.counts.update(loaded.counts)
    summary.failures.extend(loaded.failures)
    kinds, counts = Library(ctx.catalog, ctx.index, ctx.embedder).index_points(), ctx.catalog.counts()
    return (f"catalog: {', '.join(f'{k} {v}' for k, v in counts.items())}; index points {sum(kinds.values())} "
            f"({kinds['abstract']} abstracts, {kinds['window']} windows, {kinds['passage']} passages)")  # fmt: skip


def _pdf_limits(ctx: JobContext, args: dict):
    from ingest.pdf_worker import PdfLimits

    return PdfLimits(
        memory_mb=args.get("memory_mb", 1024), seconds=args.get("timeout", 60.0),
        max_bytes=ctx.settings.sources.pdf_max_bytes,
    )  # fmt: skip


def run_pdfs(ctx: JobContext, args: dict, summary: Summary, progress) -> None:
    from ingest.pdfs import download_pdfs, ingest_pdf_files, pdf_files

    limits = _pdf_limits(ctx, args)
    if args.get("paths"):
        files = pdf_files([Path(p) for p in args["paths"]])
        ingest_pdf_files(ctx.catalog, ctx.index, ctx.embedder, files, summary, progress, limits=limits)
        return

    def fetch(client, progress):
        download_pdfs(ctx.catalog, ctx.index, ctx.embedder, client, summary, progress, limits=limits,
                      limit=args.get("limit"), retry_failed=bool(args.get("retry_failed")),
                      pdf_base=ctx.settings.sources.arxiv_pdf_url)  # fmt: skip

    _fetching(ctx, summary, progress, fetch, index_after=False)


def run_arxiv(ctx: JobContext, args: dict, summary: Summary, progress) -> None:
    from ingest.harvest.arxiv import ArxivQuery, harvest_api, harvest_oai

    src, first, last = ctx.settings.sources, _day(args.get("since")), _day(args.get("until"))
    if args.get("oai"):
        options = {"metadata_prefix": args.get("format", "arXiv"), "set_spec": args.get("set"), "since": first,
                   "until": last, "limit": args.get("limit")}  # fmt: skip

        def fetch(client, progress):
            harvest_oai(ctx.catalog, client, src.arxiv_oai_url, summary, progress, **options)
    else:
        wanted = ArxivQuery(query=args.get("query"), categories=tuple(args.get("categories", ())), since=first,
                            until=last)  # fmt: skip

        def fetch(client, progress):
            harvest_api(ctx.catalog, client, src.arxiv_api_url, wanted, summary, progress,
                        page_size=args.get("page_size", 100), limit=args.get("limit"))  # fmt: skip

    _fetching(ctx, summary, progress, fetch, index_after=args.get("index", True))


def run_openalex(ctx: JobContext, args: dict, summary: Summary, progress) -> str | None:
    from ingest.harvest.openalex import OpenAlex, enrich_entities, enrich_papers, name_references

    src, refresh, notes = ctx.settings.sources, bool(args.get("refresh")), []
    key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None

    def fetch(client, progress):
        api = OpenAlex(client, src.openalex_url, src.contact_email, key)
        if budget := api.budget():
            notes.append(f"OpenAlex budget left today: ${budget.get('daily_remaining_usd')}")
        enrich_papers(ctx.catalog, api, summary, progress, refresh=refresh, limit=args.get("limit"))
        if args.get("references", True):
            name_references(ctx.catalog, api, summary, progress)
        if args.get("entities", True):
            enrich_entities(ctx.catalog, api, summary, progress, refresh=refresh)

    _fetching(ctx, summary, progress, fetch, index_after=args.get("index", True))
    return "\n".join(notes) or None


def run_s2(ctx: JobContext, args: dict, summary: Summary, progress) -> None:
    from ingest.harvest.s2 import SemanticScholar, enrich_papers

    src = ctx.settings.sources
    key = src.s2_api_key.get_secret_value() if src.s2_api_key else None

    def fetch(client, progress):
        api = SemanticScholar(client, src.s2_url, key)
        enrich_papers(ctx.catalog, api, summary, progress, refresh=bool(args.get("refresh")),
                      references=args.get("references", True), limit=args.get("limit"),
                      citations=bool(args.get("citations")))  # fmt: skip

    _fetching(ctx, summary, progress, fetch, index_after=args.get("index", True))


def analyser(settings, retrier=None):
    """The `ask` function of the analysis step, or None in retrieval-only mode (`retrier`: the LLM client's own
    policy when None)."""
    config = settings.llm_config()
    if config is None:
        return None
    from dataclasses import replace

    from assistant.llm import complete

    config = replace(config, max_tokens=max(config.max_tokens, 600))
    return lambda messages: complete(config, messages, json_object=True, retrier=retrier)


def run_analyse(ctx: JobContext, args: dict, summary: Summary, progress) -> None:
    from assistant.llm import LLMError
    from ingest.analyse import analyse_papers

    ask = analyser(ctx.settings)
    if ask is None:
        raise JobIncomplete("no LLM is configured: set SCHOLARLOOM_LLM (e.g. openai/gpt-4o-mini or ollama_chat/qwen2.5)")
    analyse_papers(ctx.catalog, ask, summary, progress, args.get("limit"), bool(args.get("refresh")),
                   unavailable=LLMError)  # fmt: skip


def _update_steps(ctx: JobContext, args: dict, summary: Summary, since: date) -> list[tuple[str, Callable]]:
    """(name, step) pairs of `ingest update`, in order; each step takes the HTTP client and the progress bars."""
    from assistant.llm import LLMError
    from ingest.analyse import analyse_papers
    from ingest.harvest.arxiv import harvest_oai
    from ingest.harvest.openalex import OpenAlex, enrich_entities
    from ingest.harvest.openalex import enrich_papers as openalex_enrich
    from ingest.harvest.s2 import SemanticScholar
    from ingest.harvest.s2 import enrich_papers as s2_enrich
    from ingest.pdfs import download_pdfs

    src, catalog = ctx.settings.sources, ctx.catalog
    openalex_key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None
    s2_key = src.s2_api_key.get_secret_value() if src.s2_api_key else None
    window = {"set_spec": args.get("set", "cs"), "since": since}
    steps = [("arXiv OAI-PMH", lambda c, p: harvest_oai(catalog, c, src.arxiv_oai_url, summary, p, **window))]
    if args.get("openalex", True):
        api = lambda c: OpenAlex(c, src.openalex_url, src.contact_email, openalex_key)  # noqa: E731
        steps.append(("OpenAlex", lambda c, p: openalex_enrich(catalog, api(c), summary, p)))
        steps.append(("OpenAlex entities", lambda c, p: enrich_entities(catalog, api(c), summary, p)))
    if args.get("s2"):
        steps.append(
            ("Semantic Scholar", lambda c, p: s2_enrich(catalog, SemanticScholar(c, src.s2_url, s2_key), summary, p))
        )
    steps.append(("index", lambda c, p: index_changes(ctx, summary, p)))
    if pdfs := args.get("pdfs", 0):
        limits = _pdf_limits(ctx, {})
        steps.append(
            ("PDFs", lambda c, p: download_pdfs(catalog, ctx.index, ctx.embedder, c, summary, p, limits=limits,
                                                limit=pdfs, pdf_base=src.arxiv_pdf_url))  # fmt: skip
        )
    ask = analyser(ctx.settings) if args.get("analyse", True) else None
    if ask is not None:
        steps.append(("analysis", lambda c, p: analyse_papers(catalog, ask, summary, p, unavailable=LLMError)))
    return steps


def run_update(ctx: JobContext, args: dict, summary: Summary, progress) -> str:
    """The incremental run: new arXiv records since the last harvest, enrichment, index, PDFs, analysis. Each step
    reports its own result; a failing step does not stop the ones after it."""
    from assistant.llm import LLMError
    from ingest.harvest.arxiv import oai_last_name
    from ingest.http import FetchError

    oai_set = args.get("set", "cs")
    last = (ctx.catalog.cursor(oai_last_name(oai_set)) or {}).get("datestamp")
    since = date.fromisoformat(last[:10]) if last else date.today() - timedelta(days=args.get("days", 3))
    problems = []
    with ctx.fetcher() as client:
        for name, step in _update_steps(ctx, args, summary, since):
            try:
                step(client, progress)
            except (FetchError, LLMError) as exc:
                problems.append(f"{name}: {exc}")
    if problems:
        raise JobIncomplete("some steps did not finish (a rerun resumes them):\n  " + "\n  ".join(problems))
    return f"update: arXiv set {oai_set} from {since.isoformat()}"


def run_paper(ctx: JobContext, args: dict, summary: Summary, progress) -> str:
    """One arXiv paper on request (`retrieval.requests`): record, OpenAlex, index, full text."""
    from ingest.harvest.openalex import OpenAlex
    from ingest.ondemand import NotOnArxiv, NotStored, fetch_paper

    src = ctx.settings.sources
    key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None
    with ctx.fetcher() as client:
        try:
            paper_id = fetch_paper(ctx.catalog, ctx.index, ctx.embedder, client, args["arxiv_id"], summary, progress,
                                   api_url=src.arxiv_api_url, openalex=OpenAlex(client, src.openalex_url,
                                   src.contact_email, key), limits=_pdf_limits(ctx, {}),
                                   pdf_base=src.arxiv_pdf_url)  # fmt: skip
        except (NotOnArxiv, NotStored) as exc:
            raise JobIncomplete(str(exc)) from exc
    return f"paper {paper_id}"


def run_upload(ctx: JobContext, args: dict, summary: Summary, progress) -> str:
    from ingest.pdf_worker import PdfLimits
    from ingest.uploads import index_upload

    s = ctx.settings
    limits = PdfLimits(max_bytes=s.upload_max_mb * 1024 * 1024, max_pages=s.upload_max_pages)
    return index_upload(ctx.catalog, ctx.index, ctx.embedder, s.uploads(), int(args["upload_id"]), limits, summary,
                        progress, fields_only=bool(args.get("fields_only")))  # fmt: skip


@dataclass(frozen=True)
class KindInfo:
    run: Kind
    label: str  # how the closing line starts: "<label>: added 3, ..."
    things: str  # what a failure skipped
    tally: bool = True  # its closing line counts records (added, updated...); else its note says what it did


KINDS: dict[str, KindInfo] = {
    "demo": KindInfo(run_demo, "demo corpus", "records"),
    "pdfs": KindInfo(run_pdfs, "PDFs", "files"),
    "arxiv": KindInfo(run_arxiv, "arXiv", "records"),
    "openalex": KindInfo(run_openalex, "OpenAlex", "records"),
    "s2": KindInfo(run_s2, "Semantic Scholar", "records"),
    "analyse": KindInfo(run_analyse, "analysis", "papers"),
    "update": KindInfo(run_update, "update", "records"),
    "paper": KindInfo(run_paper, "paper", "records"),
    "upload": KindInfo(run_upload, "upload", "files"),
    "backup": KindInfo(run_backup, "backup", "items", tally=False),
    "rebuild": KindInfo(run_rebuild, "index rebuild", "points", tally=False),
}


def bound_kinds(ctx: JobContext) -> dict[str, Callable]:
    """Each kind with its context bound: what `ingest.jobs.JobRunner` calls with (arguments, summary, progress)."""
    return {name: (lambda args, summary, progress, run=info.run: run(ctx, args, summary, progress))
            for name, info in KINDS.items()}  # fmt: skip
