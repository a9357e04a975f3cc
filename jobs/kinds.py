"""The jobs that fill the archive: each `scholarloom ingest` command's work, as a function of a typed context
(`jobs.context`) and its kind's arguments (`jobs.arguments`).

The same function runs in the command's own process (no server holds the index, or the index is a Qdrant server)
and in `serve`'s job worker (the command handed its job over): `jobs.registry` names each kind's function. The
queue is `jobs.queue`, the worker `jobs.runner`; the kinds that look after the archive (backup, rebuild) are
`jobs.upkeep`. A user's upload is read, described and indexed here (`index_upload`), its row moved through its
states (`retrieval.library.uploads`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

from ingest.analyse import analyse_papers
from ingest.demo import DEMO_DIR, load_demo
from ingest.harvest.arxiv import ArxivQuery, harvest_api, harvest_oai, oai_last_name
from ingest.harvest.openalex import OpenAlex, enrich_entities, name_references
from ingest.harvest.openalex import enrich_from_openalex as openalex_enrich
from ingest.harvest.s2 import SemanticScholar
from ingest.harvest.s2 import enrich_from_s2 as s2_enrich
from ingest.http import FetchError
from ingest.indexing import index_papers
from ingest.ondemand import NotOnArxiv, NotStored, fetch_paper
from ingest.pdf_worker import PdfError, PdfLimits, PdfWorker
from ingest.pdfs import download_pdfs, ingest_pdf_files, pdf_files
from ingest.pipeline import finish_catalog
from ingest.report import Failure, Summary
from ingest.snapshot import SnapshotFilter, import_snapshot
from ingest.writer import Writer, upload_text
from jobs.arguments import (
    AnalyseArguments,
    ArxivArguments,
    DemoArguments,
    JobKind,
    OpenAlexArguments,
    PaperArguments,
    PdfsArguments,
    ReferencesArguments,
    S2Arguments,
    SnapshotArguments,
    UpdateArguments,
    UploadArguments,
)
from jobs.context import JobContext, JobIncomplete, Progress
from retrieval.library.uploads import Upload, Uploads, UploadState


def index_changes(ctx: JobContext, summary: Summary, progress: Progress) -> None:
    """After records changed: cross-record work, then embed and index what changed."""
    finish_catalog(ctx.writer.catalog)
    index_papers(ctx.writer, summary, progress, batch=ctx.limits.index_batch)


def _fetching(ctx: JobContext, summary: Summary, progress: Progress, fetch: Callable, index_after: bool = True) -> None:
    """Run `fetch(client, progress)`; a fetch error ends it (what was stored stays) but the index still catches up."""
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


def run_demo(ctx: JobContext, args: DemoArguments, summary: Summary, progress: Progress) -> str:
    root = Path(args.source) if args.source else DEMO_DIR
    if args.write_vectors and ctx.writer.index.count():
        raise JobIncomplete(f"--write-vectors needs an empty data directory; {ctx.place.path} holds an index")
    loaded = load_demo(ctx.writer, root, progress, write_vectors=args.write_vectors)
    summary.counts.update(loaded.counts)
    summary.failures.extend(loaded.failures)
    kinds, counts = ctx.writer.index.points_by_kind(), ctx.writer.catalog.counts()
    return (f"catalog: {', '.join(f'{k} {v}' for k, v in counts.items())}; index points {sum(kinds.values())} "
            f"({kinds['abstract']} abstracts, {kinds['window']} windows, {kinds['passage']} passages)")  # fmt: skip


def run_pdfs(ctx: JobContext, args: PdfsArguments, summary: Summary, progress: Progress) -> None:
    limits = ctx.limits.pdfs(args.memory_mb, args.timeout)
    if args.paths:
        files = pdf_files([Path(p) for p in args.paths])
        ingest_pdf_files(ctx.writer, files, summary, progress, limits=limits)
        return

    def fetch(client, progress):
        download_pdfs(ctx.writer, client, summary, progress, limits=limits,
                      limit=args.limit, retry_failed=args.retry_failed,
                      pdf_base=ctx.sources.arxiv_pdf_url)  # fmt: skip

    _fetching(ctx, summary, progress, fetch, index_after=False)


def run_arxiv(ctx: JobContext, args: ArxivArguments, summary: Summary, progress: Progress) -> None:
    src, first, last = ctx.sources, _day(args.since), _day(args.until)
    if args.oai:
        options = {"metadata_prefix": args.metadata_format, "set_spec": args.oai_set, "since": first, "until": last,
                   "limit": args.limit}  # fmt: skip

        def fetch(client, progress):
            harvest_oai(ctx.writer.catalog, client, src.arxiv_oai_url, summary, progress, **options)
    else:
        wanted = ArxivQuery(query=args.query, categories=args.categories, since=first, until=last)

        def fetch(client, progress):
            harvest_api(ctx.writer.catalog, client, src.arxiv_api_url, wanted, summary, progress,
                        page_size=args.page_size, limit=args.limit)  # fmt: skip

    _fetching(ctx, summary, progress, fetch, index_after=args.index)


def run_openalex(ctx: JobContext, args: OpenAlexArguments, summary: Summary, progress: Progress) -> str | None:
    src, refresh, notes = ctx.sources, args.refresh, []

    def fetch(client, progress):
        api = OpenAlex(client, src.openalex_url, src.contact_email, src.openalex_key)
        if budget := api.budget():
            notes.append(f"OpenAlex budget left today: ${budget.get('daily_remaining_usd')}")
        openalex_enrich(ctx.writer.catalog, api, summary, progress, refresh=refresh, limit=args.limit)
        if args.references:
            name_references(ctx.writer.catalog, api, summary, progress)
        if args.entities:
            enrich_entities(ctx.writer.catalog, api, summary, progress, refresh=refresh)

    _fetching(ctx, summary, progress, fetch, index_after=args.index)
    return "\n".join(notes) or None


def run_s2(ctx: JobContext, args: S2Arguments, summary: Summary, progress: Progress) -> None:
    src = ctx.sources

    def fetch(client, progress):
        api = SemanticScholar(client, src.s2_url, src.s2_key)
        s2_enrich(ctx.writer.catalog, api, summary, progress, refresh=args.refresh, references=args.references,
                  limit=args.limit, citations=args.citations)  # fmt: skip

    _fetching(ctx, summary, progress, fetch, index_after=args.index)


NO_MODEL = "no LLM is configured: set SCHOLARLOOM_LLM (e.g. openai/gpt-4o-mini or ollama_chat/qwen2.5)"


def run_analyse(ctx: JobContext, args: AnalyseArguments, summary: Summary, progress: Progress) -> None:
    if ctx.analyst is None:
        raise JobIncomplete(NO_MODEL)
    analyse_papers(ctx.writer.catalog, ctx.analyst.ask, summary, progress, args.limit, args.refresh,
                   unavailable=ctx.analyst.unavailable)  # fmt: skip


def _update_steps(ctx: JobContext, args: UpdateArguments, summary: Summary, since: date) -> list[tuple[str, Callable]]:
    """(name, step) pairs of `ingest update`, in order; each step takes the HTTP client and the progress bars."""
    src, catalog = ctx.sources, ctx.writer.catalog
    window = {"set_spec": args.oai_set, "since": since}
    steps = [("arXiv OAI-PMH", lambda c, p: harvest_oai(catalog, c, src.arxiv_oai_url, summary, p, **window))]
    if args.openalex:
        api = lambda c: OpenAlex(c, src.openalex_url, src.contact_email, src.openalex_key)  # noqa: E731
        steps.append(("OpenAlex", lambda c, p: openalex_enrich(catalog, api(c), summary, p)))
        steps.append(("OpenAlex entities", lambda c, p: enrich_entities(catalog, api(c), summary, p)))
    if args.s2:
        s2 = lambda c: SemanticScholar(c, src.s2_url, src.s2_key)  # noqa: E731
        steps.append(("Semantic Scholar", lambda c, p: s2_enrich(catalog, s2(c), summary, p)))
    steps.append(("index", lambda c, p: index_changes(ctx, summary, p)))
    if pdfs := args.pdfs:
        limits = ctx.limits.pdfs()
        steps.append(
            ("PDFs", lambda c, p: download_pdfs(ctx.writer, c, summary, p, limits=limits, limit=pdfs,
                                                pdf_base=src.arxiv_pdf_url))  # fmt: skip
        )
    analyst = ctx.analyst if args.analyse else None
    if analyst is not None:
        steps.append(("analysis", lambda c, p: analyse_papers(catalog, analyst.ask, summary, p,
                                                              unavailable=analyst.unavailable)))  # fmt: skip
    return steps


def run_snapshot(ctx: JobContext, args: SnapshotArguments, summary: Summary, progress: Progress) -> str:
    """arXiv's bulk metadata snapshot (`ingest.snapshot`), then the index catches up (unless `index` is false)."""
    wanted = SnapshotFilter(args.categories, _day(args.since), _day(args.until))
    path = Path(args.path)
    if not path.is_file():
        raise JobIncomplete(f"no snapshot file at {path}")
    kept = import_snapshot(ctx.writer.catalog, path, summary, progress, wanted=wanted, limit=args.limit)
    if args.index:
        index_changes(ctx, summary, progress)
    return f"snapshot {path.name}: {kept} records kept by the filters"


def run_update(ctx: JobContext, args: UpdateArguments, summary: Summary, progress: Progress) -> str:
    """The incremental run: new arXiv records since the last harvest, enrichment, index, PDFs, analysis. Each step
    reports its own result; a failing step does not stop the ones after it."""
    oai_set = args.oai_set
    last = (ctx.writer.catalog.cursor(oai_last_name(oai_set)) or {}).get("datestamp")
    since = date.fromisoformat(last[:10]) if last else date.today() - timedelta(days=args.days)
    problems = []
    failing = (FetchError, *(ctx.analyst.unavailable if ctx.analyst else ()))
    with ctx.fetcher() as client:
        for name, step in _update_steps(ctx, args, summary, since):
            try:
                step(client, progress)
            except failing as exc:
                problems.append(f"{name}: {exc}")
    if problems:
        raise JobIncomplete("some steps did not finish (a rerun resumes them):\n  " + "\n  ".join(problems))
    return f"update: arXiv set {oai_set} from {since.isoformat()}"


def run_paper(ctx: JobContext, args: PaperArguments, summary: Summary, progress: Progress) -> str:
    """One arXiv paper on request (`jobs.requests`): record, OpenAlex, index, full text."""
    src = ctx.sources
    with ctx.fetcher() as client:
        try:
            paper_id = fetch_paper(ctx.writer, client, args.arxiv_id, summary, progress,
                                   api_url=src.arxiv_api_url, openalex=OpenAlex(client, src.openalex_url,
                                   src.contact_email, src.openalex_key), limits=ctx.limits.pdfs(),
                                   pdf_base=src.arxiv_pdf_url)  # fmt: skip
        except (NotOnArxiv, NotStored) as exc:
            raise JobIncomplete(str(exc)) from exc
    return f"paper {paper_id}"


def run_references(ctx: JobContext, args: ReferencesArguments, summary: Summary, progress: Progress) -> str:
    """The papers a paper's reference list names that are not here (`jobs.requests.request_references`), each as the
    `paper` job fetches one. A paper arXiv does not have is reported and the others fetched; a network failure ends
    the job with what was fetched kept (asked again, the papers already here are skipped)."""
    src, catalog = ctx.sources, ctx.writer.catalog
    wanted = list(args.arxiv_ids)
    task = progress.add_task(f"references of {args.paper_id}: papers fetched", total=len(wanted))
    fetched = 0
    with ctx.fetcher() as client:
        openalex = OpenAlex(client, src.openalex_url, src.contact_email, src.openalex_key)
        for arxiv_id in wanted:
            if catalog.resolve_paper_id(arxiv_id) is not None:
                summary.add("already here")
            else:
                try:
                    fetch_paper(ctx.writer, client, arxiv_id, summary, None, api_url=src.arxiv_api_url,
                                openalex=openalex, limits=ctx.limits.pdfs(), pdf_base=src.arxiv_pdf_url)  # fmt: skip
                    fetched += 1
                except (NotOnArxiv, NotStored) as exc:
                    summary.fail(Failure(JobKind.REFERENCES, arxiv_id, str(exc)))
                except FetchError as exc:
                    raise JobIncomplete(f"arXiv or the network failed at {arxiv_id}: {exc}\n{fetched} papers were "
                                        "fetched before it and are kept.") from exc  # fmt: skip
            progress.advance(task)
    return f"references of {args.paper_id}: {fetched} of {len(wanted)} papers fetched"


# --- a user's upload: read in the bounded worker, its passages written for its owner alone ------------


class UploadFailed(RuntimeError):
    """The upload cannot be indexed; the message says why (and is kept on the upload's row)."""


def index_upload(
    writer: Writer, uploads: Uploads, upload_id: int, limits: PdfLimits, summary: Summary, progress=None,
    fields_only: bool = False,
) -> str:  # fmt: skip
    """Parse, describe and index one upload; returns the closing note. `fields_only`: the user corrected the
    title, authors or abstract of an indexed file, so only its title-and-abstract point is embedded again."""
    upload = uploads.by_id(upload_id)
    if upload is None:
        return f"upload {upload_id} was deleted before it was indexed"
    if fields_only and upload.edited and upload.passages:
        return _describe_again(writer, uploads, upload)
    try:
        with PdfWorker(limits) as worker:
            parsed = worker.read(uploads.file(upload).read_bytes())
    except (PdfError, OSError) as exc:
        uploads.move(upload_id, UploadState.FAILED, error=str(exc)[:500])
        summary.fail(Failure(JobKind.UPLOAD, upload.filename, str(exc)))
        raise UploadFailed(str(exc)) from exc
    meta = parsed.meta
    if upload.edited:  # the user's corrections stand
        meta = replace(meta, title=upload.title or meta.title, authors=upload.authors, abstract=upload.abstract)
    title = meta.title or upload.filename.removesuffix(".pdf")
    found = writer.passages(parsed.pages)
    writer.upload(upload.point_paper_id, upload.owner, upload_text(title, meta.abstract), found)
    now = uploads.by_id(upload_id)
    if now is None:  # deleted while it was being indexed: leave nothing behind
        writer.forget([upload.point_paper_id])
        return f"upload {upload_id} was deleted while it was indexed"
    linked = writer.catalog.resolve_paper_id(meta.arxiv_id or "") if meta.arxiv_id else None
    linked = linked or (writer.catalog.paper_by_doi(meta.doi) if meta.doi else None)
    summary.add("pages", len(parsed.pages))
    summary.add("passages", len(found))
    counts = dict(pages=len(parsed.pages), passages=len(found), arxiv_id=meta.arxiv_id, doi=meta.doi, paper_id=linked)
    if now.edited and not upload.edited:  # corrected while the file was read: the corrections win
        uploads.update(upload_id, **counts)
        return _describe_again(writer, uploads, uploads.by_id(upload_id))
    uploads.move(upload_id, UploadState.INDEXED, error=None, title=title, authors=meta.authors, abstract=meta.abstract,
                 **counts)  # fmt: skip
    return f"{upload.filename}: {len(parsed.pages)} pages, {len(found)} passages"


def _describe_again(writer: Writer, uploads: Uploads, upload: Upload) -> str:
    """The corrected title and abstract embedded as the upload's one `abstract` point; its passages are the file's
    own and stay."""
    writer.describe(upload.point_paper_id, upload.owner, upload_text(upload.title, upload.abstract))
    if uploads.by_id(upload.id) is None:  # deleted meanwhile: leave nothing behind
        writer.forget([upload.point_paper_id])
        return f"upload {upload.id} was deleted while it was described again"
    uploads.move(upload.id, UploadState.INDEXED, error=None)
    return f"{upload.filename}: described again"


def run_upload(ctx: JobContext, args: UploadArguments, summary: Summary, progress: Progress) -> str:
    return index_upload(ctx.writer, ctx.uploads, int(args.upload_id), ctx.limits.uploads(), summary, progress,
                        fields_only=args.fields_only)  # fmt: skip
