"""Every kind of job by the name its rows keep (`JobKind`), and what each takes: a frozen dataclass per kind, read
from and written to the JSON of the `jobs.arguments` column (`common.stored`: a row queued by an older version
reads as it was meant). What runs each kind, and what follows it, is `jobs.registry`."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from common.stored import StoredArguments
from retrieval.library.queueing import UploadArguments
from retrieval.vectors.place import SWAP_GRACE_SECONDS

__all__ = ["JobKind", "UploadArguments"]  # (the upload's arguments are the uploads' own: they queue its reading)


class JobKind(StrEnum):
    DEMO = "demo"
    PDFS = "pdfs"
    ARXIV = "arxiv"
    OPENALEX = "openalex"
    S2 = "s2"
    ANALYSE = "analyse"
    UPDATE = "update"
    SNAPSHOT = "snapshot"
    PAPER = "paper"
    REFERENCES = "references"
    UPLOAD = UploadArguments.KIND  # "upload", named where the uploads queue it (retrieval may not import jobs)
    ZOTERO = "zotero"
    WATCHES = "watches"
    BACKUP = "backup"
    REBUILD = "rebuild"


def _key(name: str) -> dict:
    """A field kept under another JSON key (the key older rows were written with)."""
    return {"key": name}


@dataclass(frozen=True)
class DemoArguments(StoredArguments):
    source: str | None = None  # the corpus's folder; None: the bundled one
    write_vectors: bool = False


@dataclass(frozen=True)
class PdfsArguments(StoredArguments):
    paths: tuple[str, ...] = ()  # files or folders here; none: download from arXiv
    limit: int | None = None
    retry_failed: bool = False
    timeout: float = 60.0
    memory_mb: int = 1024


@dataclass(frozen=True)
class ArxivArguments(StoredArguments):
    query: str | None = None
    categories: tuple[str, ...] = ()
    since: str | None = None  # YYYY-MM-DD
    until: str | None = None
    oai: bool = False  # OAI-PMH ListRecords instead of the API
    oai_set: str | None = field(default=None, metadata=_key("set"))
    metadata_format: str = field(default="arXiv", metadata=_key("format"))
    limit: int | None = None
    page_size: int = 100
    index: bool = True


@dataclass(frozen=True)
class OpenAlexArguments(StoredArguments):
    refresh: bool = False
    limit: int | None = None
    references: bool = True
    entities: bool = True
    index: bool = True


@dataclass(frozen=True)
class S2Arguments(StoredArguments):
    refresh: bool = False
    limit: int | None = None
    references: bool = True
    citations: bool = False
    index: bool = True


@dataclass(frozen=True)
class AnalyseArguments(StoredArguments):
    limit: int | None = None
    refresh: bool = False


@dataclass(frozen=True)
class UpdateArguments(StoredArguments):
    oai_set: str = field(default="cs", metadata=_key("set"))
    days: int = 3  # on the first run, how far back
    openalex: bool = True
    s2: bool = False
    pdfs: int = 0  # most new PDFs downloaded
    analyse: bool = True


@dataclass(frozen=True)
class SnapshotArguments(StoredArguments):
    path: str
    categories: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    limit: int | None = None
    index: bool = True


@dataclass(frozen=True)
class PaperArguments(StoredArguments):
    arxiv_id: str

    def key(self) -> str:
        """Requests of one paper share its job."""
        return f"{JobKind.PAPER}:{self.arxiv_id}"


@dataclass(frozen=True)
class ReferencesArguments(StoredArguments):
    paper_id: str
    arxiv_ids: tuple[str, ...]  # the papers its reference list names that are not here

    def key(self) -> str:
        return f"{JobKind.REFERENCES}:{self.paper_id}"


@dataclass(frozen=True)
class ZoteroArguments(StoredArguments):
    library: int  # the `ZoteroLibrary` row
    owner: str
    on_demand: bool = False  # whether its arXiv items not here may be fetched
    daily: int = 20  # the owner's daily share of papers fetched

    def key(self) -> str:
        return f"{JobKind.ZOTERO}:{self.library}"


@dataclass(frozen=True)
class WatchesArguments(StoredArguments):
    """No owner: every saved question, each searching what came since its last run (after papers came); an owner:
    theirs; an owner and a question: that one."""

    owner: str | None = None
    question: int | None = None

    def key(self) -> str:
        if self.question is not None:
            return f"{JobKind.WATCHES}:{self.question}"
        return f"{JobKind.WATCHES}:owner:{self.owner}" if self.owner is not None else str(JobKind.WATCHES)


@dataclass(frozen=True)
class BackupArguments(StoredArguments):
    destination: str


@dataclass(frozen=True)
class RebuildArguments(StoredArguments):
    grace: float = SWAP_GRACE_SECONDS  # seconds the old index stays readable after the swap


# Kinds that spend one daily share: a paper fetched alone and the papers of a reference list fetched together
DAILY_SHARES = {JobKind.PAPER: (JobKind.PAPER, JobKind.REFERENCES),
                JobKind.REFERENCES: (JobKind.PAPER, JobKind.REFERENCES)}  # fmt: skip


def share_size(arguments: dict) -> int:
    """What a job spends of a daily share: one, or one per paper it fetches (`arxiv_ids`)."""
    papers = arguments.get("arxiv_ids")
    return len(papers) if isinstance(papers, list) else 1
