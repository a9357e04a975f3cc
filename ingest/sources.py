"""The services the harvesters talk to (SCHOLARLOOM_SOURCES__* of the settings) and the polite HTTP client they are
fetched with: what an ingest step or a job needs to know to reach arXiv, OpenAlex and Semantic Scholar."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr

from ingest.http import PoliteClient, Politeness


class SourceSettings(BaseModel):
    """The services the harvesters talk to (SCHOLARLOOM_SOURCES__*). Only these hosts and arxiv.org are fetched."""

    contact_email: str | None = Field(
        None,
        description="An address the services may write to about our traffic: sent in the User-Agent and as "
        "OpenAlex's mailto (its polite pool).",
    )
    arxiv_api_url: str = Field("https://export.arxiv.org/api/query", description="arXiv API query endpoint (Atom).")
    arxiv_oai_url: str = Field("https://oaipmh.arxiv.org/oai", description="arXiv OAI-PMH endpoint.")
    arxiv_pdf_url: str = Field("https://arxiv.org/pdf", description="Where PDFs are fetched: <this>/<arXiv id>.")
    arxiv_interval: float = Field(
        3.0, ge=0, description="Seconds between two requests to arXiv (its terms ask for one every 3 seconds)."
    )
    openalex_url: str = Field("https://api.openalex.org", description="OpenAlex API base URL.")
    openalex_api_key: SecretStr | None = Field(None, description="OpenAlex API key (premium), if you have one.")
    openalex_interval: float = Field(0.2, ge=0, description="Seconds between two OpenAlex requests.")
    s2_url: str = Field("https://api.semanticscholar.org", description="Semantic Scholar API base URL.")
    s2_api_key: SecretStr | None = Field(None, description="Semantic Scholar API key (sent as x-api-key).")
    s2_interval: float = Field(
        1.0, ge=0, description="Seconds between two Semantic Scholar requests (1 request/s with a key)."
    )
    zotero_url: str = Field("https://api.zotero.org", description="Zotero's web API (users connect libraries).")
    zotero_local_url: str | None = Field(
        None, description="The local API of a Zotero 7 desktop on this server's machine (http://localhost:23119/api; "
        "also list its host:port in private_hosts). Unset: users connect web libraries only.")  # fmt: skip
    zotero_file_hosts: list[str] = Field(
        default_factory=lambda: ["zoterofilestorage.s3.amazonaws.com"],
        description="Hosts Zotero's file downloads redirect to (its file storage); a download redirected anywhere "
        "else is refused.",
    )
    zotero_interval: float = Field(0.5, ge=0, description="Seconds between two Zotero requests.")
    pdf_max_bytes: int = Field(50_000_000, ge=1, description="Largest PDF downloaded, in bytes.")
    private_hosts: list[str] = Field(
        default_factory=list,
        description="host:port pairs of configured endpoints that may resolve to private addresses (a mirror on "
        "your own network, or a test server on 127.0.0.1); every other private address is refused.",
    )

    @property
    def openalex_key(self) -> str | None:
        return self.openalex_api_key.get_secret_value() if self.openalex_api_key else None

    @property
    def s2_key(self) -> str | None:
        return self.s2_api_key.get_secret_value() if self.s2_api_key else None

    def hosts(self) -> list[str]:
        configured = [self.arxiv_api_url, self.arxiv_oai_url, self.arxiv_pdf_url, self.openalex_url, self.s2_url,
                      self.zotero_url, self.zotero_local_url or "", *(f"https://{h}" for h in self.zotero_file_hosts)]
        return sorted({"arxiv.org", "export.arxiv.org", *(urlsplit(u).hostname or "" for u in configured)} - {""})

    def fetcher(self, transport=None):
        """The polite HTTP client of the harvesters: only arxiv.org and the configured API hosts."""
        try:
            release = version("scholarloom")
        except PackageNotFoundError:  # running from a source tree that was not installed
            release = "dev"

        src = self
        contact = f"; mailto:{src.contact_email}" if src.contact_email else ""
        arxiv = Politeness(interval=src.arxiv_interval, max_bytes=src.pdf_max_bytes, timeout=60.0)
        rules = {"arxiv.org": arxiv}
        lighter = [Politeness(interval=i) for i in (src.arxiv_interval, src.openalex_interval, src.s2_interval)]
        zotero = Politeness(interval=src.zotero_interval, max_bytes=src.pdf_max_bytes, timeout=60.0)
        endpoints = ((src.arxiv_pdf_url, arxiv), (src.arxiv_api_url, lighter[0]), (src.arxiv_oai_url, lighter[0]),
                     (src.openalex_url, lighter[1]), (src.s2_url, lighter[2]), (src.zotero_url, zotero),
                     (src.zotero_local_url or "", zotero),
                     *((f"https://{h}", zotero) for h in src.zotero_file_hosts))  # fmt: skip
        for url, rule in endpoints:  # a PDF mirror keeps arXiv's size cap; the first rule named for a host holds
            host = urlsplit(url).hostname or ""
            if host and not host.endswith("arxiv.org"):
                rules.setdefault(host, rule)
        return PoliteClient(
            user_agent=f"ScholarLoom/{release} (self-hosted research assistant{contact})",
            allowed_hosts=src.hosts(),
            politeness=rules,
            private_hosts=src.private_hosts,
            transport=transport,
        )
