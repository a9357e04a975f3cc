"""One settings object, read from SCHOLARLOOM_* environment variables, built in the entry point."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:  # pragma: no cover
    from retrieval.library.uploads import UploadLimits

from scholarloom.sections import AdmissionLimits, AgentSettings, ChatTurns, SignIns, SourceSettings
from scholarloom.services import Services

__all__ = ["AdmissionLimits", "AgentSettings", "Settings", "SourceSettings"]
DEMO_SECRET_MARKER = "demo-secret-change-me"


class Settings(Services, BaseSettings):
    """Everything ScholarLoom reads from its environment (the services it describes are built by `Services`)."""

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
    llm_citations: Literal["mend", "mark", "off"] = Field(
        "mend", description="Each cited sentence of a model's answer checked against what the chat showed of the paper "
        "it cites: 'mend' marks each and sends those not found back to the model once to fix or drop (one request "
        "more, only then, counted in the user's daily tokens); 'mark' marks them only; 'off' checks nothing.",
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
    chat: ChatTurns = Field(default_factory=ChatTurns, description="Chat questions (and card actions) answered at "
                            "once, in all and per user, and the line the others wait in, shown in the chat "
                            "(SCHOLARLOOM_CHAT__*). A turn mostly waits for the model: about 24 a core "
                            "keep the cores busy without a line at ordinary load.")
    sign_in: SignIns = Field(default_factory=SignIns, description="Password sign-ins checked at once (argon2: about "
                             "1.5 cores for 0.15 s each) and the line the others wait in, per client address; past "
                             "it the form says to try again (SCHOLARLOOM_SIGN_IN__*).")
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

    def upload_limits(self) -> "UploadLimits":
        """How large a user's upload may be (`retrieval.library.uploads.UploadLimits`)."""
        from retrieval.library.uploads import UploadLimits

        return UploadLimits(self.upload_max_mb, self.upload_max_pages, self.upload_quota_mb)

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
