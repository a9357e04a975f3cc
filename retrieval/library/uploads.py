"""A user's own PDFs: private items beside the public catalog, never rows of it.

An upload is a row of `uploads` (its owner, the file's name and digest, what was read from it) and a file
`<data dir>/uploads/<id>.pdf` named by the row's id only. Its index points carry the paper id `upload:<id>` and
the payload `owner`, so a search sees them only when its `Filters.viewer` is that owner (`retrieval.vectors.store`); the
public catalog (`papers`) never holds them, so pages, lists, feeds and the sitemap cannot show them. Search
results turn an upload's id into a `Paper` only for its owner (`retrieval.library.visible`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path

from sqlalchemy import Column, UniqueConstraint
from sqlalchemy.engine import Engine
from sqlmodel import JSON, Field, Session, SQLModel, func, select

from retrieval.library.queueing import JobSubmitter, UploadArguments
from retrieval.scholarly.models import empty_list
from retrieval.upkeep.database import ShareUsedUp, hold_lock, update_row
from retrieval.vectors.index import Index
from retrieval.vectors.points import ABSTRACT_KINDS, PASSAGE_KINDS

PREFIX = "upload:"
KINDS = ABSTRACT_KINDS + PASSAGE_KINDS  # the points an upload has


def _now() -> datetime:
    return datetime.now(timezone.utc)


class UploadState(StrEnum):
    """Where an upload stands. Its moves (`MOVES`) are the only ones `Uploads.move` makes."""

    QUEUED = "queued"  # its job will read and index it (new, corrected, or asked again)
    INDEXED = "indexed"  # its passages are searchable
    FAILED = "failed"  # the file could not be read; `error` says why


# An indexed file never becomes failed: a later run of its job that fails leaves the passages it has searchable.
MOVES: dict[UploadState, frozenset[UploadState]] = {
    UploadState.QUEUED: frozenset({UploadState.QUEUED, UploadState.INDEXED, UploadState.FAILED}),
    UploadState.INDEXED: frozenset({UploadState.QUEUED, UploadState.INDEXED}),
    UploadState.FAILED: frozenset({UploadState.QUEUED, UploadState.INDEXED, UploadState.FAILED}),
}


class Upload(SQLModel, table=True):
    __tablename__ = "uploads"

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(index=True, max_length=200)
    filename: str = Field(max_length=300, description="as the user's browser named it; shown, never a path")
    sha256: str = Field(max_length=64)
    size: int
    state: str = Field(default=UploadState.QUEUED, max_length=20, description="queued, indexed or failed")
    error: str | None = None
    pages: int = 0
    passages: int = 0
    title: str = ""
    authors: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    abstract: str = ""
    arxiv_id: str | None = Field(default=None, max_length=40, description="printed in the file")
    doi: str | None = Field(default=None, max_length=200, description="printed in the file")
    paper_id: str | None = Field(default=None, max_length=200, description="the catalog's paper this file is")
    job_id: int | None = None
    edited: bool = Field(default=False, description="the user corrected the fields: indexing keeps them")
    created_at: datetime = Field(default_factory=_now)
    origin: str | None = Field(default=None, max_length=200, description="where it came from when no person "
                               "uploaded it: zotero:<library>:<item key>")  # fmt: skip

    @property
    def point_paper_id(self) -> str:
        return f"{PREFIX}{self.id}"

    @property
    def path(self) -> str:
        return f"/me/library/{self.id}"


Recorder = Callable[[Session, Upload], None]  # writes beside a new upload's row, in its transaction (`Uploads.add`)


@dataclass(frozen=True)
class UploadLimits:
    """How large an upload may be: the one place its limits are written (the settings fill it; the web form, the
    chat's attach button, the store and the job that reads the file all ask it)."""

    max_mb: int = 50  # one file
    max_pages: int = 400
    quota_mb: int = 500  # all of one user's files

    FRAMING = 64 * 1024  # what a multipart request adds around the file (its boundary and headers)

    @property
    def max_bytes(self) -> int:
        return self.max_mb * MB

    @property
    def quota_bytes(self) -> int:
        return self.quota_mb * MB

    def request_bytes(self, file_bytes: int | None = None) -> int:
        """The largest request body that can carry a file of `file_bytes` (the cap by default)."""
        return (self.max_bytes if file_bytes is None else file_bytes) + self.FRAMING


class LibraryPaper(SQLModel, table=True):
    """A public paper a user keeps in their library (joined from a reading list); an arXiv id still being fetched
    is kept under the id the paper will have."""

    __tablename__ = "library_papers"
    __table_args__ = (UniqueConstraint("owner", "paper_id"),)

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(index=True, max_length=200)
    paper_id: str = Field(max_length=200)
    added_at: datetime = Field(default_factory=_now)


class UploadRefused(Exception):
    """The file is not taken; `status` is the HTTP answer that says so."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


MB = 1024 * 1024


@dataclass(frozen=True)
class Uploads:
    """The rows and their files. Every read takes the owner: another user's item is the same None as a missing
    one."""

    engine: Engine
    folder: Path

    def file(self, upload: Upload) -> Path:
        return self.folder / f"{int(upload.id)}.pdf"

    def add(self, owner: str, filename: str, spooled: Path, size: int, sha256: str, queue: JobSubmitter | None = None,
            quota_bytes: int | None = None, also: Recorder | None = None, origin: str | None = None,
            ) -> Upload:  # fmt: skip
        """The row (with its `upload` job when a queue is given), then the spooled file moved to its name (in the same
        folder: a rename, never a copy). The room left of `quota_bytes` is read and taken in one transaction under
        the owner's lock: twenty uploads at once cannot each see the same free room. `also` writes in that same
        transaction what records where the file came from (a Zotero item), so a crash cannot keep one without the
        other; `origin` says it on the row (`Upload.origin`). Raises UploadRefused."""
        with Session(self.engine, expire_on_commit=False) as session:
            hold_lock(session, f"user:{owner}")
            if quota_bytes is not None and size > quota_bytes - self._used(session, owner):
                raise UploadRefused(413, f"Your library is full ({quota_bytes // MB} MB); delete items to make room.")
            upload = Upload(owner=owner, filename=filename[:300] or "upload.pdf", sha256=sha256, size=size,
                            origin=origin)  # fmt: skip
            session.add(upload)
            session.flush()
            if queue is not None:
                try:
                    reading = UploadArguments(upload.id)
                    job, _ = queue.add(session, reading.KIND, reading, owner, reading.key(), for_user=True)
                except ShareUsedUp as refused:
                    raise UploadRefused(429, str(refused)) from None
                upload.job_id = job.id
            if also is not None:
                also(session, upload)
            session.commit()
        os.replace(spooled, self.file(upload))
        return upload

    def get(self, owner: str | None, upload_id: int) -> Upload | None:
        if not owner or not 0 < upload_id < 2**62:
            return None
        with Session(self.engine) as session:
            row = session.get(Upload, upload_id)
            return row if row is not None and row.owner == owner else None

    def room(self, owner: str, limits: UploadLimits) -> int:
        """Bytes the owner may still add in one file: the file cap or what is left of the quota, the smaller."""
        return min(limits.max_bytes, limits.quota_bytes - self.used_bytes(owner))

    def accept(self, owner: str, filename: str, spooled: Path, limits: UploadLimits, queue: JobSubmitter,
               also: Recorder | None = None, origin: str | None = None) -> Upload:  # fmt: skip
        """A spooled file (in this folder) checked and stored, with its `upload` job queued (and `also` and
        `origin`, as `add` says); the spooled file is gone either way. Raises UploadRefused."""
        try:
            size = spooled.stat().st_size
            if size > limits.max_bytes:
                raise UploadRefused(413, f"The file is larger than the limit of {limits.max_mb} MB.")
            if size > limits.quota_bytes - self.used_bytes(owner):
                raise UploadRefused(413, f"Your library is full ({limits.quota_mb} MB); delete items to make room.")
            digest = hashlib.sha256()
            with spooled.open("rb") as handle:
                head = handle.read(1024)
                if not head.lstrip().startswith(b"%PDF-"):
                    raise UploadRefused(415, "Only PDF files can be added (this file does not start with %PDF-).")
                digest.update(head)
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
            upload = self.add(owner, Path(filename or "upload.pdf").name, spooled, size, digest.hexdigest(), queue,
                              limits.quota_bytes, also, origin)  # fmt: skip
        finally:
            spooled.unlink(missing_ok=True)
        return self.get(owner, upload.id)

    def correct(self, owner: str, upload_id: int, queue: JobSubmitter, title: str | None = None,
                authors: list[str] | None = None, abstract: str | None = None) -> Upload | None:  # fmt: skip
        """The owner's corrections of what was read from the file, kept from now on; the item is indexed again
        (its title and abstract are what search matches). None when it is not the owner's."""
        if self.get(owner, upload_id) is None:
            return None
        fields = {"title": title, "authors": authors, "abstract": abstract}
        changed = {k: v for k, v in fields.items() if v is not None}
        reading = UploadArguments(upload_id, fields_only=True)  # a queued full indexing takes them too
        try:
            job, _ = queue.submit(reading.KIND, reading, owner, key=reading.key(), for_user=True)
        except ShareUsedUp as refused:
            raise UploadRefused(429, str(refused)) from None
        self.move(upload_id, UploadState.QUEUED, **changed, edited=True, job_id=job.id)
        return self.get(owner, upload_id)

    def by_id(self, upload_id: int) -> Upload | None:
        """Whoever owns it: for the job that indexes it, never for a request."""
        with Session(self.engine) as session:
            return session.get(Upload, upload_id)

    def mine(self, owner: str) -> list[Upload]:
        with Session(self.engine) as session:
            return list(session.exec(select(Upload).where(Upload.owner == owner).order_by(Upload.id.desc())).all())

    def used_bytes(self, owner: str) -> int:
        with Session(self.engine) as session:
            return self._used(session, owner)

    @staticmethod
    def _used(session: Session, owner: str) -> int:
        return int(session.exec(select(func.coalesce(func.sum(Upload.size), 0)).where(Upload.owner == owner)).one())

    def move(self, upload_id: int, to: UploadState, **fields) -> bool:
        """The upload to state `to` with `fields`, when `MOVES` allows it from where it stands; False (nothing
        written) when it was deleted or the move is not one of its moves."""
        with Session(self.engine) as session:
            row = session.get(Upload, upload_id)
            if row is None or to not in MOVES[UploadState(row.state)]:
                return False
            row.state = to
            for name, value in fields.items():
                setattr(row, name, value)
            session.add(row)
            session.commit()
        return True

    def update(self, upload_id: int, **fields) -> None:
        """Fields other than the state (`move` changes that)."""
        assert "state" not in fields, "an upload's state changes through Uploads.move"
        update_row(self.engine, Upload, upload_id, fields)

    def join(self, owner: str, paper_ids: list[str]) -> int:
        """Keep these public papers in the owner's library; returns how many were new there."""
        with Session(self.engine) as session:
            have = set(session.exec(select(LibraryPaper.paper_id).where(LibraryPaper.owner == owner)))
            new = list(dict.fromkeys(p for p in paper_ids if p not in have))
            session.add_all(LibraryPaper(owner=owner, paper_id=p) for p in new)
            session.commit()
        return len(new)

    def joined(self, owner: str) -> list[str]:
        """The public papers in the owner's library, latest first."""
        with Session(self.engine) as session:
            query = select(LibraryPaper.paper_id).where(LibraryPaper.owner == owner).order_by(LibraryPaper.id.desc())
            return list(session.exec(query))

    def library_ids(self, owner: str) -> list[str]:
        """What a chat about the owner's library searches: the papers kept and the uploads (as `upload:<n>`)."""
        return [*self.joined(owner), *(u.point_paper_id for u in self.mine(owner))]

    def leave(self, owner: str, paper_id: str) -> bool:
        with Session(self.engine) as session:
            row = session.exec(select(LibraryPaper).where(LibraryPaper.owner == owner,
                                                          LibraryPaper.paper_id == paper_id)).first()  # fmt: skip
            if row is None:
                return False
            session.delete(row)
            session.commit()
            return True

    def delete(self, upload: Upload, index: Index) -> None:
        """Its index points, then its file, then its row (what the user sees last goes last: a failure half way
        leaves the item listed, to be deleted again)."""
        index.replace([upload.point_paper_id], [], kinds=KINDS)
        self.file(upload).unlink(missing_ok=True)
        with Session(self.engine) as session:
            row = session.get(Upload, upload.id)
            if row is not None:
                session.delete(row)
                session.commit()
