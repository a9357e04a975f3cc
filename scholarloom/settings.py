"""One settings object, read from SCHOLARLOOM_* environment variables, built in the entry point."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:  # pragma: no cover
    from jobs.context import Analyst, JobContext
    from retrieval.archive import Archive
    from retrieval.library.uploads import UploadLimits, Uploads
    from retrieval.scholarly.catalog import Catalog
    from retrieval.vectors.embeddings import Embedder
    from retrieval.vectors.index import Index
    from retrieval.vectors.place import IndexPlace

from scholarloom.sections import AdmissionLimits, AgentSettings, SourceSettings

__all__ = ["AdmissionLimits", "AgentSettings", "Settings", "SourceSettings"]
DEMO_SECRET_MARKER = "demo-secret-change-me"


class Settings(BaseSettings):
    """Everything ScholarLoom reads from its environment."""

    model_config = SettingsConfigDict(env_prefix="SCHOLARLOOM_", env_nested_delimiter="__", extra="ignore")

    data_dir: Path = Field(
        Path("data/local"),
        description="Directory for everything the app writes: database, vector index, models, chat files, logs.",
    )
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL of the catalog and user database; unset means a SQLite file in the data directory.",
    )
    shared_models_dir: Path | None = Field(
        None,
        description="Directory of prepared embedding models (`scholarloom models prepare`) that several instances on "
        "one machine share; unset means <data dir>/models.",
    )
    embed_threads: int | None = Field(
        None, ge=1, le=256, description="Threads each encoder's ONNX session uses; unset: one per core. Set 1 where "
        "several processes embed on one machine (a test run's workers, several servers): they would contend.")
    embed_precision: Literal["int8", "float32"] = Field(
        "int8", description="The dense encoder's weights: 'int8' (quantised per channel, made locally from the "
        "float32 model; faster) or 'float32'. Vectors of one are not mixed with the other's: changing it needs "
        "`scholarloom index rebuild` (doctor says so).")
    embed_device: Literal["cpu", "cuda", "auto"] = Field(
        "auto", description="Where the dense encoder runs: 'cuda' (onnxruntime-gpu's CUDA provider; without it the "
        "CPU, with a warning and a line in `scholarloom doctor`), 'cpu', or 'auto' (the GPU when there is one).")
    embed_workers: int = Field(
        1, ge=1, le=64, description="Encoder processes that feed an ingest's (or a server's jobs') one writer, each "
        "with SCHOLARLOOM_EMBED_THREADS threads (default: the cores shared out). 1: the encoder runs in the command's "
        "own process (the server's jobs: in one child process).")
    index_vectors: Literal["int8", "float32"] = Field(
        "int8", description="How a new index keeps its dense vectors: 'int8' (int8 copies in memory, a quarter of "
        "float32's size, the float32 originals on disk; searches rescore with them) or 'float32' (all in memory). "
        "An index made before keeps its own layout until `scholarloom index convert` (doctor says so).")
    index_batch: int = Field(64, ge=1, le=4096, description="Papers an ingest embeds and writes per step; each step "
                             "is marked done, so a killed ingest embeds at most one step again when rerun.")
    vector_book: str = Field("demo", description="Dense vectors `serve`'s jobs read before running their encoder: "
                             "'demo' (the bundled demo's texts), the path of a book (`make demo-vectors`), or 'off'.")
    qdrant_url: str | None = Field(
        None, description="URL of a Qdrant server or cluster; unset means the embedded store in the data directory."
    )
    qdrant_api_key: SecretStr | None = Field(
        None, description="API key for the Qdrant server given by qdrant_url, if it needs one."
    )
    collection: str = Field("scholarloom", description="Name of the Qdrant collection holding abstracts and passages.")
    llm: str | None = Field(
        None,
        description="litellm model name, e.g. openai/gpt-4o-mini or ollama_chat/qwen2.5; unset means retrieval-only mode.",
    )
    llm_api_base: str | None = Field(
        None, description="Base URL of the LLM provider's API (for Ollama, vLLM or any OpenAI-compatible server)."
    )
    llm_api_key: SecretStr | None = Field(
        None, description="API key passed to the LLM provider; providers' own variables (OPENAI_API_KEY...) work too."
    )
    llm_tools: Literal["auto", "on", "off"] = Field(
        "auto",
        description="How the model answers: with tools (the agent), or 'off' for a fixed search-then-write pipeline "
        "(models that cannot call tools); 'auto' uses the pipeline when the probe at start saw no tool call.",
    )
    llm_process: bool = Field(
        True, description="`serve` makes the chat's model requests in a process of its own, so litellm's per-request "
        "work does not hold up the server's other turns; off: in the server's process.",
    )
    llm_daily_tokens: int | None = Field(
        None, ge=1, description="Most language-model tokens one user's chat turns may use a day (UTC); then the chat "
        "answers by search alone, saying so. Unset: no limit.",
    )
    log_format: Literal["text", "json"] = Field("text", description="How `serve` writes its logs: text, or one JSON "
                                                 "object a line (with the request id of what it was doing).")
    log_level: Literal["debug", "info", "warning", "error"] = Field("warning", description="The least a log line "
                                                                    "must matter to be written.")
    metrics_token: SecretStr | None = Field(
        None, description="Bearer token a Prometheus scraper sends for /metrics (admins' sessions may read it too); "
        "unset: admins only.",
    )
    auth_secret: SecretStr | None = Field(None, description="Secret that signs session tokens; required outside "
                                          "demo mode.")
    smtp_host: str | None = Field(None, description="The SMTP server that sends saved-question digests; unset: no "
                                  "e-mail (the page and the private feed still show what is new).")
    smtp_port: int = Field(587, ge=1, le=65535, description="Its port.")
    smtp_user: str | None = Field(None, description="The SMTP account, if it needs one.")
    smtp_password: SecretStr | None = Field(None, description="Its password.")
    smtp_from: str = Field("ScholarLoom <scholarloom@localhost>", description="The digests' From address.")
    smtp_starttls: bool = Field(True, description="Whether to ask the SMTP server for TLS (STARTTLS) first.")
    session_hours: float = Field(168.0, gt=0, le=24 * 90, description="How long a sign-in lasts (hours) before the "
                                 "user must sign in again; the session cookie and its signed token both expire then.")
    oauth_signup: bool = Field(True, description="Whether someone signing in for the first time through an OAuth "
                               "provider (switched on by Chainlit's OAUTH_<PROVIDER>_CLIENT_ID/SECRET variables) gets "
                               "an account; false admits only identities already linked.")
    demo: bool = Field(False, description="Demo mode: allows a generated auth secret; never use it for a public "
                       "instance.")
    host: str = Field("127.0.0.1", description="Address the web server listens on.")
    port: int = Field(8000, ge=1, le=65535, description="Port the web server listens on.")
    forwarded_allow_ips: str = Field(
        "127.0.0.1",
        description="Reverse proxies whose X-Forwarded-For names the client (comma-separated addresses or networks;"
        " '*' trusts anyone). Behind a proxy on another host or container, name it here, or every user shares"
        " the proxy's address for sign-in throttling.",
    )
    public_url: str | None = Field(
        None, description="Public base URL of the site, used in canonical links; unset means http://host:port."
    )
    on_demand: Literal["off", "signed-in"] = Field(
        "signed-in",
        description="Who may fetch a paper that is not here from arXiv (the 404 page's button, the search page, "
        "the chat's card): signed-in users, or nobody (off).",
    )
    on_demand_daily: int = Field(20, ge=0, le=10_000, description="Papers each user may fetch on request a day.")
    upload_max_mb: int = Field(50, ge=1, le=2_000, description="Largest PDF a user may upload (refused before it is "
                               "read).")
    upload_max_pages: int = Field(400, ge=1, le=10_000, description="Most pages an uploaded PDF may have.")
    upload_quota_mb: int = Field(500, ge=0, le=1_000_000, description="Storage each user's uploads may take in all.")
    public_rate: int = Field(60, ge=0, le=100_000, description="Searches and comparisons one address may ask for a "
                             "minute, in bursts of as many (0: no limit); anonymous ones are also computed two at a "
                             "time, and their answers kept a minute.")
    token_rate: int = Field(120, ge=0, le=100_000, description="Requests one user may make a minute with personal "
                            "API tokens, all their tokens together (/api, /mcp), in bursts of as many (0: no limit).")
    mcp: AdmissionLimits = Field(default_factory=AdmissionLimits, description="MCP tool calls and resource reads at "
                                 "once, in all and per user, and the line the others wait in (SCHOLARLOOM_MCP__*).")
    user_jobs: int = Field(20, ge=1, le=10_000, description="Jobs one user may have waiting or running at once "
                           "(uploads being read, papers being fetched); more are refused until some are done.")
    zotero_sync_files: int = Field(100, ge=1, le=100_000, description="Most files one Zotero sync downloads; a "
                                   "sync that reaches it stores what it has and says so, and the next takes the rest.")
    zotero_sync_minutes: float = Field(10.0, gt=0, le=24 * 60, description="Longest one Zotero sync downloads "
                                       "files (minutes; it holds the job worker meanwhile); then as at "
                                       "SCHOLARLOOM_ZOTERO_SYNC_FILES.")
    update_every: str | None = Field(
        None,
        description="How often `serve` runs the steps of `ingest update` itself, e.g. 24h, 90m or 3600 (seconds); "
        "unset means never (use cron with `scholarloom ingest update`, which hands its job to the server).",
    )
    agent: AgentSettings = Field(default_factory=AgentSettings, description="Limits on the agent's turns.")
    sources: SourceSettings = Field(
        default_factory=lambda: SourceSettings(), description="Where and how politely the harvesters fetch."
    )

    _built: dict = PrivateAttr(default_factory=dict)

    @field_validator("update_every")
    @classmethod
    def _interval(cls, value: str | None) -> str | None:
        if value is not None and value.strip():
            from jobs.runner import interval

            interval(value)  # refuses what it cannot read, at start-up
            return value.strip()
        return None

    def update_interval(self) -> timedelta | None:
        from jobs.runner import interval

        return interval(self.update_every) if self.update_every else None

    @model_validator(mode="after")
    def _resolve_paths(self) -> "Settings":
        self.data_dir = self.data_dir.expanduser().resolve()
        return self

    # --- derived locations -------------------------------------------------
    @property
    def chat_files_dir(self) -> Path:
        return self.data_dir / "chat-files"

    @property
    def catalog_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'scholarloom.db'}"

    @property
    def models_dir(self) -> Path:
        return self.shared_models_dir.expanduser().resolve() if self.shared_models_dir else self.data_dir / "models"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "qdrant"

    @property
    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    def require_secret(self) -> str:
        """The auth secret, refusing to run outside demo mode without a real one."""
        secret = self.auth_secret.get_secret_value() if self.auth_secret else ""
        if secret and secret != DEMO_SECRET_MARKER and len(secret) >= 32:
            return secret
        if not self.demo:
            raise RuntimeError(
                "SCHOLARLOOM_AUTH_SECRET must be set to a random string of at least 32 characters "
                "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`); "
                "only demo mode (SCHOLARLOOM_DEMO=1) runs without one."
            )
        return _demo_secret(self.data_dir)

    # --- factories for the expensive things (built once, on first use) -------
    def _once(self, key: str, build):
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]

    def adopt(self, **built) -> "Settings":
        """Use objects built elsewhere instead of building them (e.g. one embedder shared by several instances in
        one process: `settings.adopt(embedder=...)`)."""
        unknown = set(built) - {"catalog", "index", "embedder", "archive"}
        if unknown:
            raise ValueError(f"nothing to adopt under {sorted(unknown)}")
        self._built.update(built)
        return self

    def catalog(self) -> "Catalog":
        from retrieval.scholarly.catalog import Catalog

        return self._once("catalog", lambda: Catalog(self.catalog_url))

    def embedder(self) -> "Embedder":
        from retrieval.vectors.embeddings import Embedder

        return self._once("embedder", lambda: Embedder(
            self.models_dir, self.embed_threads, precision=self.embed_precision, device=self.embed_device))  # fmt: skip

    def index_place(self) -> "IndexPlace":
        """Where the index lives: the embedded engine's folder, or the collection of a Qdrant server."""
        from retrieval.vectors.place import IndexPlace
        from retrieval.vectors.store import VectorLayout

        api_key = self.qdrant_api_key.get_secret_value() if self.qdrant_api_key else None
        return IndexPlace(self.collection, path=self.index_dir, url=self.qdrant_url, api_key=api_key,
                          layout=VectorLayout(self.index_vectors))  # fmt: skip

    def index(self) -> "Index":
        return self._once("index", lambda: self.index_place().open())

    def uploads(self) -> "Uploads":
        """Users' own PDFs: rows in the catalog's database, files in `<data dir>/uploads`."""
        from retrieval.library.uploads import Uploads

        def build():
            folder = self.data_dir / "uploads"
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            return Uploads(self.catalog().engine, folder)

        return self._once("uploads", build)

    def upload_limits(self) -> "UploadLimits":
        """How large a user's upload may be (`retrieval.library.uploads.UploadLimits`)."""
        from retrieval.library.uploads import UploadLimits

        return UploadLimits(self.upload_max_mb, self.upload_max_pages, self.upload_quota_mb)

    def archive(self) -> "Archive":
        """The archive as one object (catalog, index, embedder): what tools, pages and benchmarks hold."""
        from retrieval.archive import Archive

        return self._once("archive", lambda: Archive(self.catalog(), self.index(), self.embedder()))

    def secret_values(self) -> list[str]:
        """Every secret these settings hold, for the logs to hide wherever one appears."""
        from urllib.parse import urlsplit

        found = [s.get_secret_value() for s in (self.auth_secret, self.llm_api_key, self.qdrant_api_key,
                 self.metrics_token, self.sources.openalex_api_key, self.sources.s2_api_key, self.smtp_password)
                 if s]  # fmt: skip
        if self.database_url and (password := urlsplit(self.database_url).password):
            found.append(password)
        return found

    def without_secrets(self) -> dict:
        """The settings, every secret left out and passwords cut from URLs (a backup keeps them as a record)."""
        from urllib.parse import urlsplit

        values = self.model_dump(mode="json", exclude={"auth_secret", "llm_api_key", "qdrant_api_key", "metrics_token",
                                                       "smtp_password"})
        for key in ("openalex_api_key", "s2_api_key"):
            values.get("sources", {}).pop(key, None)
        for key in ("database_url", "llm_api_base", "qdrant_url"):
            if values.get(key) and (parts := urlsplit(values[key])).password:
                values[key] = parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")).geturl()
        return values

    def backup_folders(self) -> dict[str, Path]:
        """The data directory's folders of files a backup keeps (the rest is rebuilt: models, scratch)."""
        return {"chat-files": self.chat_files_dir, "uploads": self.data_dir / "uploads"}

    def llm_config(self):
        """The LLM to call, or None in retrieval-only mode."""
        if not self.llm:
            return None
        from assistant.llm import LLMConfig

        return LLMConfig(
            model=self.llm,
            api_base=self.llm_api_base,
            api_key=self.llm_api_key.get_secret_value() if self.llm_api_key else None,
            timeout=self.agent.request_timeout,
            max_tokens=self.agent.max_tokens,
        )

    def analyst(self, retrier=None) -> "Analyst | None":
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

    def job_context(self, index=None, embedder=None, clients=None, close=None, searcher=None) -> "JobContext":
        """What a job runs with (`jobs.context`): by default this process's own index and encoder (a command);
        `serve`'s worker gives its encoder process, its one polite client and the archive it answers from."""
        from auth.accounts import is_admin
        from ingest.writer import Writer
        from jobs.context import Backups, JobContext, Limits

        limits = Limits(self.sources.pdf_max_bytes, self.upload_limits(), self.index_batch,
                        zotero_files=self.zotero_sync_files, zotero_seconds=self.zotero_sync_minutes * 60)  # fmt: skip
        writer = Writer(self.catalog(), index or self.index(), embedder or self.writing_encoder())
        engine = writer.catalog.engine
        return JobContext(
            writer, self.uploads(), self.sources,
            self.index_place(), limits, Backups(self.backup_folders(), self.without_secrets()), self.analyst(),
            clients=clients, close=close or (lambda: None), sealer=self.sealer(), post=self.digest_post(),
            searcher=searcher or self.archive, is_admin=lambda user: is_admin(engine, user),
        )  # fmt: skip

    def digest_post(self, mailing: bool = True):
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

    def sealer(self):
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


def _demo_secret(data_dir: Path) -> str:
    """A random secret kept in the data directory, so demo sessions survive restarts."""
    import secrets

    path = data_dir / "demo-auth-secret"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    try:  # created readable by its owner only: no moment when others may read it
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_text().strip()
    with os.fdopen(descriptor, "w") as out:
        out.write(secret)
    return secret
