"""`scholarloom doctor`: every part the chosen mode needs, checked and explained; wired from the parts' own checks.

Each check is ok, a warning (works, but worth knowing) or a failure (something needed does not work). The command's
exit code is 0 only when nothing failed.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import asdict, dataclass

OK, WARN, FAIL = "ok", "warn", "fail"
LOW_DISK = 1 << 30  # 1 GiB free: a warning; a tenth of it: a failure


@dataclass(frozen=True)
class Check:
    area: str
    status: str
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


def settings_checks(settings) -> list[Check]:
    found = [_writable(settings.data_dir)]
    if found[0].status == FAIL:
        return found  # (demo mode keeps its secret there too)
    try:
        settings.require_secret()
        if settings.demo:
            found.append(Check("settings", WARN, "demo mode: sessions are signed with a generated secret; never use "
                                                  "it for a public instance"))  # fmt: skip
        else:
            found.append(Check("settings", OK, "SCHOLARLOOM_AUTH_SECRET is set"))
    except RuntimeError as exc:
        found.append(Check("settings", FAIL, str(exc)))
    found += _private_files(settings)
    if settings.forwarded_allow_ips.strip() == "*":
        found.append(Check("settings", WARN, "SCHOLARLOOM_FORWARDED_ALLOW_IPS is '*': any client can name its own "
                                             "address and guess passwords under as many as it likes; name your "
                                             "proxy's address"))  # fmt: skip
    if settings.public_url:
        found.append(Check("settings", OK, f"public URL {settings.public_url}"))
    else:
        found.append(Check("settings", WARN, f"SCHOLARLOOM_PUBLIC_URL is unset: feeds, exports and sign-in links say "
                                             f"{settings.base_url}"))  # fmt: skip
    return found


def _private_files(settings) -> list[Check]:
    """The data directory and the SQLite database hold password hashes, chat history, feed keys and private uploads:
    nobody but their owner may read them."""
    found = []
    database = settings.data_dir / "scholarloom.db"
    for path, mode in ((settings.data_dir, 0o700), (database, 0o600)):
        if path.exists() and (now := path.stat().st_mode & 0o777) & 0o077:
            said = f"{path} can be read by other users of this machine (mode {now:o}): chmod {mode:o} {path}"
            found.append(Check("settings", WARN, said))
    return found


def _writable(data_dir) -> Check:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("settings", FAIL, f"the data directory {data_dir} cannot be written ({exc.strerror or exc})")
    free = shutil.disk_usage(data_dir).free
    status = FAIL if free < LOW_DISK // 10 else WARN if free < LOW_DISK else OK
    return Check("settings", status, f"data directory {data_dir} is writable; {free / (1 << 30):.1f} GiB free")


def database_checks(settings) -> list[Check]:
    from sqlalchemy import text

    from retrieval.upkeep.schema import revision

    try:
        engine = settings.catalog().engine  # opening it brings it to the newest schema revision
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:  # any driver's error: say which database and what kind
        return [Check("database", FAIL, f"{_where(settings)} does not answer ({type(exc).__name__})")]
    counts, schema = settings.catalog().counts(), revision(engine)
    return [Check("database", OK, f"{_where(settings)}: schema revision {schema.current}; {counts.get('papers', 0):,} "
                                  f"papers, {counts.get('researchers', 0):,} researchers")]  # fmt: skip


def _where(settings) -> str:
    if (settings.database_url or "").startswith("postgres"):
        return "PostgreSQL"  # (its URL may hold a password: never printed)
    return f"SQLite ({settings.data_dir / 'scholarloom.db'})"


def index_checks(settings) -> list[Check]:
    from jobs.queue import JobQueue
    from retrieval.vectors.index import Filters, IndexUnavailable
    from retrieval.vectors.points import PASSAGE_KINDS

    try:
        index = settings.index()
    except IndexUnavailable as exc:
        worker = JobQueue(settings.catalog().engine).worker_alive()
        if worker is not None:
            return [Check("index", OK, f"held by the running server ({worker.name}): it is the one writer, so "
                                       "commands hand their jobs to it")]  # fmt: skip
        return [Check("index", FAIL, str(exc))]
    abstracts = index.count(Filters(kinds=("abstract",)))
    passages = index.count(Filters(kinds=PASSAGE_KINDS))
    status = OK if abstracts else WARN
    kept = "int8 in memory, float32 originals on disk" if index.layout == "int8" else "float32 in memory"
    detail = f"{abstracts:,} papers and {passages:,} full-text passages indexed; dense vectors {kept}"
    found = [Check("index", status, detail + ("" if abstracts else " (load some: `scholarloom ingest demo`)"))]
    found += _layout_check(settings, index)
    remake = "`scholarloom index rebuild` makes it anew (the answers are the same meanwhile)"
    for lack in index.behind():
        found.append(Check("index", WARN, f"this index was made by an earlier version: {lack}; {remake}"))
    return found + _encoder_check(settings, index) if abstracts else found


def _layout_check(settings, index) -> list[Check]:
    """Whether the index keeps its vectors as SCHOLARLOOM_INDEX_VECTORS asks (an index made before the compact
    index keeps float32 in memory until it is converted)."""
    if index.layout == settings.index_vectors:
        return []
    return [Check("index", WARN, f"the index keeps its dense vectors as {index.layout} and SCHOLARLOOM_INDEX_VECTORS "
                                 f"asks for {settings.index_vectors}: stop `serve` and run `scholarloom index "
                                 "convert` (nothing is embedded again; about a minute per million points), or set "
                                 f"SCHOLARLOOM_INDEX_VECTORS={index.layout}")]  # fmt: skip


def _encoder_check(settings, index) -> list[Check]:
    """Whether the index's vectors come from the encoder this instance runs: a changed SCHOLARLOOM_EMBED_PRECISION
    (or model) leaves vectors that queries of the new one read slightly wrong. One paper is embedded again and
    compared with its stored vector (float32 against int8: cosine about 0.99; the same encoder: 1)."""
    import numpy as np

    from ingest.writer import index_text

    paper = next(iter(settings.catalog().iter_papers(batch=1)), None)
    stored = index.abstract_vector(paper.id) if paper else None
    if stored is None:
        return []
    cosine = float(np.dot(settings.embedder().dense([index_text(paper)])[0], stored))
    if cosine >= 0.999:
        return []
    return [Check("index", WARN, f"the index's vectors were made by another encoder than this one "
                                 f"({settings.embed_precision}; paper {paper.id}: cosine {cosine:.3f}): set "
                                 "SCHOLARLOOM_EMBED_PRECISION back, or embed it again with `scholarloom index "
                                 "rebuild`")]  # fmt: skip


def model_checks(settings) -> list[Check]:
    from retrieval.vectors.embeddings import prepare_models

    try:
        dense_dir, bm25_dir = prepare_models(settings.models_dir, settings.embed_precision)
        device, note = settings.embedder().encoder_device()
    except Exception as exc:
        return [Check("models", FAIL, f"the embedding models cannot be prepared in {settings.models_dir} "
                                      f"({type(exc).__name__}: {exc})")]  # fmt: skip
    found = [Check("models", OK, f"dense encoder {dense_dir.name} ({settings.embed_precision}, on the "
                                 f"{device.upper()}) and BM25 in {settings.models_dir}")]  # fmt: skip
    return found + ([Check("models", WARN, note)] if note else [])


def llm_checks(settings) -> list[Check]:
    from assistant.probe import probe

    config = settings.llm_config()
    if config is None:
        return [Check("llm", OK, "no SCHOLARLOOM_LLM: the chat answers in retrieval-only mode")]
    found = asyncio.run(probe(config))
    if found.error:
        return [Check("llm", FAIL, f"{config.model}: {found.error}")]
    context = f"; reads {found.context_tokens:,} tokens" if found.context_tokens else "; context size unknown"
    if not found.calls_tools:
        return [Check("llm", WARN, f"{config.model} answers but did not call a tool when asked: it answers through "
                                   f"the search-then-write pipeline (for the agent, a model that calls tools, or "
                                   f"`ollama_chat/`){context}")]  # fmt: skip
    streams = "streams" if found.streams else "does not stream (answers arrive whole)"
    return [Check("llm", OK, f"{config.model} answers, {streams}, calls tools{context}")]


def source_checks(settings) -> list[Check]:
    """The harvest sources answer (needs the network, so only on request)."""
    found = []
    with settings.fetcher() as client:
        for name, url in (("arXiv", "https://export.arxiv.org/api/query?search_query=all:test&max_results=1"),
                          ("OpenAlex", "https://api.openalex.org/works?per-page=1"),
                          ("Semantic Scholar", "https://api.semanticscholar.org/graph/v1/paper/search?query=test&limit=1")):  # fmt: skip
            try:
                client.get(url)
                found.append(Check("sources", OK, f"{name} answers"))
            except Exception as exc:
                found.append(Check("sources", WARN, f"{name} does not answer ({type(exc).__name__})"))
    return found


def run_checks(settings, sources: bool = False) -> list[Check]:
    found = settings_checks(settings)
    if any(c.status == FAIL and "cannot be written" in c.detail for c in found):
        return found  # without a data directory nothing else can be opened
    found += database_checks(settings) + index_checks(settings) + model_checks(settings) + llm_checks(settings)
    if sources:
        found += source_checks(settings)
    return found
