"""The factories that build the expensive things from the settings: the catalog, the index, the encoder, the archive,
the uploads, what a job runs with, the digests' post, the Zotero keys' sealer, the analysis step's model.

`Services` is a base of `scholarloom.settings.Settings`, so an entry point writes `settings.archive()` as paper-qa
writes `Settings.get_llm()`, while `settings.py` holds only what is configured. Each service is built once, on first
use, and `close()` releases what they opened (the embedded index holds a file lock). Nothing is built on import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:  # pragma: no cover
    from jobs.context import Analyst, JobContext
    from jobs.digests import DigestPost
    from retrieval.archive import Archive
    from retrieval.library.uploads import Uploads
    from retrieval.library.zotero import Sealer
    from retrieval.scholarly.catalog import Catalog
    from retrieval.vectors.embeddings import Embedder
    from retrieval.vectors.index import Index
    from retrieval.vectors.place import IndexPlace


class Services:
    """The services the settings describe, built once each (`_built`, the settings' private cache) and closed
    together; the settings' fields (paths, URLs, limits, secrets) say how."""

    def _once(self, key: str, build):
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def adopt(self, **built) -> Self:
        """Use objects built elsewhere instead of building them (e.g. one embedder shared by several instances in
        one process: `settings.adopt(embedder=...)`)."""
        unknown = set(built) - {"catalog", "index", "embedder", "archive"}
        if unknown:
            raise ValueError(f"nothing to adopt under {sorted(unknown)}")
        self._built.update(built)
        return self

    def catalog(self) -> Catalog:
        from retrieval.scholarly.catalog import Catalog

        return self._once("catalog", lambda: Catalog(self.catalog_url))

    def embedder(self) -> Embedder:
        from retrieval.vectors.embeddings import Embedder

        return self._once("embedder", lambda: Embedder(
            self.models_dir, self.embed_threads, precision=self.embed_precision, device=self.embed_device))  # fmt: skip

    def index_place(self) -> IndexPlace:
        """Where the index lives: the embedded engine's folder, or the collection of a Qdrant server."""
        from retrieval.vectors.place import IndexPlace
        from retrieval.vectors.store import VectorLayout

        api_key = self.qdrant_api_key.get_secret_value() if self.qdrant_api_key else None
        return IndexPlace(self.collection, path=self.index_dir, url=self.qdrant_url, api_key=api_key,
                          layout=VectorLayout(self.index_vectors))  # fmt: skip

    def index(self) -> Index:
        return self._once("index", lambda: self.index_place().open())

    def uploads(self) -> Uploads:
        """Users' own PDFs: rows in the catalog's database, files in `<data dir>/uploads`."""
        from retrieval.library.uploads import Uploads

        def build():
            folder = self.data_dir / "uploads"
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            return Uploads(self.catalog().engine, folder)

        return self._once("uploads", build)

    def archive(self) -> Archive:
        """The archive as one object (catalog, index, embedder): what tools, pages and benchmarks hold."""
        from retrieval.archive import Archive

        return self._once("archive", lambda: Archive(self.catalog(), self.index(), self.embedder()))

    def analyst(self, retrier=None) -> Analyst | None:
        """The analysis step's model (JSON answers, room for them), or None in retrieval-only mode (`retrier`: the
        LLM client's own policy when None)."""
        config = self.llm_config()
        if config is None:
            return None
        from dataclasses import replace

        from assistant.llm import LLMError, complete
        from auth.usage import record_usage, tokens_today
        from jobs.context import Analyst

        config = replace(config, max_tokens=max(config.max_tokens, 600))
        engine, budget = self.catalog().engine, self.llm_daily_tokens

        def for_user(username: str):
            """Asking on a user's behalf: each answer's tokens written to their day (mode "saved question"), as a
            chat turn's are; None once their day's budget is spent."""
            if budget and tokens_today(engine, username) >= budget:
                return None

            def count(prompt: int, written: int, estimated: bool) -> None:
                record_usage(engine, username, config.model, "saved question", prompt, written, estimated)

            return lambda messages: complete(config, messages, json_object=True, retrier=retrier, counted=count)

        return Analyst(lambda messages: complete(config, messages, json_object=True, retrier=retrier), (LLMError,),
                       for_user)  # fmt: skip

    def writing_encoder(self):
        """What a command's ingest embeds with: this process's encoder, or SCHOLARLOOM_EMBED_WORKERS encoder
        processes (`retrieval.vectors.encoder_process.EncoderPool`)."""
        if self.embed_workers == 1:
            return self.embedder()
        return self._once("encoder_pool", lambda: self.encoder_processes(nice=0))

    def encoder_processes(self, nice: int):
        """The encoder in child processes: one (`EmbedderProcess`, the server's jobs), or SCHOLARLOOM_EMBED_WORKERS
        of them (`EncoderPool`). The caller closes it."""
        from retrieval.vectors.encoder_process import EmbedderProcess, EncoderPool

        if self.embed_workers > 1:
            return EncoderPool(self.models_dir, self.embed_workers, self.embed_threads, nice, self.embed_precision,
                               self.embed_device)  # fmt: skip
        return EmbedderProcess(self.models_dir, self.embed_threads, nice, self.embed_precision, self.embed_device)

    def job_context(self, index=None, embedder=None, clients=None, close=None, searcher=None) -> JobContext:
        """What a job runs with (`jobs.context`): by default this process's own index and encoder (a command);
        `serve`'s worker gives its encoder process, its one polite client and the archive it answers from."""
        from assistant.composer import cited_numbers
        from auth.accounts import is_admin
        from ingest.writer import Writer
        from jobs.context import Backups, JobContext, JobLimits

        limits = JobLimits(self.sources.pdf_max_bytes, self.upload_limits(), self.index_batch,
                           self.zotero_sync_files, self.zotero_sync_minutes * 60)  # fmt: skip
        writer = Writer(self.catalog(), index or self.index(), embedder or self.writing_encoder())
        engine = writer.catalog.engine
        return JobContext(
            writer, self.uploads(), self.sources,
            self.index_place(), limits, Backups(self.backup_folders(), self.without_secrets()), self.analyst(),
            clients=clients, close=close or (lambda: None), sealer=self.sealer(), post=self.digest_post(),
            searcher=searcher or self.archive, is_admin=lambda user: is_admin(engine, user), cited=cited_numbers,
        )  # fmt: skip

    def digest_post(self, mailing: bool = True) -> DigestPost | None:
        """What mails saved-question digests and their confirmations (`jobs.digests.DigestPost`): None without an
        SMTP server or a secret to sign their links with. `mailing=False`: only what checks a link's signature
        (the pages of a server without SMTP: a link mailed before the setting was removed still works)."""
        from common.mail import Mailer
        from jobs.digests import DigestPost

        try:
            secret = self.require_secret()
        except RuntimeError:
            return None
        if not mailing:
            return DigestPost(None, self.base_url, secret)
        if not self.smtp_host:
            return None
        password = self.smtp_password.get_secret_value() if self.smtp_password else None
        mailer = Mailer(self.smtp_host, self.smtp_port, self.smtp_from, self.smtp_user, password, self.smtp_starttls)
        return DigestPost(mailer, self.base_url, secret)

    def sealer(self) -> Sealer | None:
        """What seals and opens the Zotero keys users connect (`retrieval.library.zotero.Sealer`): None without a
        usable secret."""
        from retrieval.library.zotero import Sealer

        try:
            return Sealer(self.require_secret())
        except RuntimeError:
            return None

    def fetcher(self, transport=None):
        """The polite HTTP client of the harvesters: only arxiv.org and the configured API hosts."""
        return self.sources.fetcher(transport)

    def close(self) -> None:
        """Release what the factories opened (the embedded index holds a file lock)."""
        for thing in self._built.values():
            close = getattr(thing, "close", None)
            if close:
                close()
        self._built.clear()
