"""A user's Zotero libraries and their named reading lists: what a sync (`jobs.zotero`) keeps between runs.

A connected library (`zotero_libraries`) is a Zotero user or group library, read with its API key (stored sealed
with a key derived from the server's secret: `Sealer`), and the library version its last sync reached; a sync asks
Zotero only for what changed since. Each Zotero item a sync took (`zotero_items`) remembers what it became: the
paper it joined to the owner's library, or the upload its PDF became, and the collections it sits in. A collection
is a named reading list (`library_lists`, `library_list_papers`), which the owner can export as a file Zotero
imports into a collection of that name.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from datetime import datetime, timezone

from sqlalchemy import Column, UniqueConstraint, delete, true, update
from sqlalchemy.engine import Engine
from sqlmodel import JSON, Field, Session, SQLModel, select

from retrieval.scholarly.models import empty_list
from retrieval.upkeep.database import hold_lock, update_row

KINDS = ("user", "group")
MAX_LIBRARIES = 10  # connected per user


def _now() -> datetime:
    return datetime.now(timezone.utc)


class ZoteroLibrary(SQLModel, table=True):
    __tablename__ = "zotero_libraries"
    __table_args__ = (UniqueConstraint("owner", "kind", "library_id", "source"),)

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(index=True, max_length=200)
    kind: str = Field(max_length=10)  # user or group
    library_id: str = Field(max_length=20)  # Zotero's number for the user or group
    source: str = Field(default="web", max_length=10)  # web (api.zotero.org) or local (Zotero 7 desktop's local API)
    sealed_key: str = Field(default="", max_length=400)  # the API key, sealed (`Sealer`); empty for the local API
    name: str = Field(default="", max_length=200)  # what Zotero calls the library (the key's user name, the group)
    version: int = 0  # the library version the last sync reached: the next asks for changes since
    # new, synced, partial (a sync stopped at its most files or minutes), refused (the key), failed, or off (the
    # Zotero desktop's library of someone who is not an admin: `jobs.zotero`)
    state: str = Field(default="new", max_length=20)
    last_error: str | None = Field(default=None, max_length=1000)
    last_synced_at: datetime | None = None
    created_at: datetime = Field(default_factory=_now)

    @property
    def prefix(self) -> str:
        return f"/{self.kind}s/{self.library_id}"


class ZoteroItem(SQLModel, table=True):
    __tablename__ = "zotero_items"
    __table_args__ = (UniqueConstraint("library", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    library: int = Field(index=True)  # zotero_libraries.id
    key: str = Field(max_length=20)  # Zotero's item key
    version: int = 0
    paper_id: str | None = Field(default=None, max_length=200)  # the paper it joined to the library
    # whether the sync put that paper in the library (False: it was there already, joined by hand or by an import,
    # so the item's deletion in Zotero leaves it there)
    joined: bool = Field(default=True, sa_column_kwargs={"server_default": true()})
    upload_id: int | None = None  # the upload its PDF became (an attachment)
    md5: str | None = Field(default=None, max_length=32)  # the attachment's file digest, as Zotero gives it
    parent: str | None = Field(default=None, max_length=20)  # an attachment's parent item
    collections: list[str] = Field(default_factory=empty_list, sa_column=Column(JSON, nullable=False))
    label: str = Field(default="", max_length=300)


class LibraryList(SQLModel, table=True):
    """A named reading list of a user: a Zotero collection (`zotero_library`, `collection_key`) or their own."""

    __tablename__ = "library_lists"
    __table_args__ = (UniqueConstraint("owner", "zotero_library", "collection_key"),)

    id: int | None = Field(default=None, primary_key=True)
    owner: str = Field(index=True, max_length=200)
    name: str = Field(max_length=300)
    zotero_library: int | None = None
    collection_key: str | None = Field(default=None, max_length=20)
    created_at: datetime = Field(default_factory=_now)


class LibraryListPaper(SQLModel, table=True):
    __tablename__ = "library_list_papers"
    __table_args__ = (UniqueConstraint("list_id", "paper_id"),)

    id: int | None = Field(default=None, primary_key=True)
    list_id: int = Field(index=True)
    paper_id: str = Field(max_length=200)  # a catalog paper's id, or `upload:<n>`


class Sealer:
    """Seals a secret (a Zotero API key) with AES-GCM under a key derived from the server's secret; a different
    server secret cannot open it (the user is asked to connect again)."""

    def __init__(self, secret: str) -> None:
        self.key = hmac.new(secret.encode(), b"scholarloom zotero keys", hashlib.sha256).digest()

    def seal(self, value: str) -> str:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = os.urandom(12)
        return base64.urlsafe_b64encode(nonce + AESGCM(self.key).encrypt(nonce, value.encode(), b"zotero")).decode()

    def open(self, sealed: str) -> str | None:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        try:
            raw = base64.urlsafe_b64decode(sealed.encode())
            return AESGCM(self.key).decrypt(raw[:12], raw[12:], b"zotero").decode()
        except (InvalidTag, ValueError):
            return None


class Libraries:
    """The connected libraries and named lists, per owner: another user's row is the same None as a missing one."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def connect(self, owner: str, kind: str, library_id: str, source: str, sealed_key: str) -> ZoteroLibrary:
        """The library's row (a new one, or the same library connected again with a new key). ValueError when the
        owner has `MAX_LIBRARIES` connected already: counted and added under the owner's lock, so requests at once
        cannot each see room for one more."""
        with Session(self.engine, expire_on_commit=False) as session:
            hold_lock(session, f"user:{owner}")
            row = session.exec(select(ZoteroLibrary).where(
                ZoteroLibrary.owner == owner, ZoteroLibrary.kind == kind, ZoteroLibrary.library_id == library_id,
                ZoteroLibrary.source == source)).first()  # fmt: skip
            if row is None and len(session.exec(select(ZoteroLibrary.id).where(
                    ZoteroLibrary.owner == owner)).all()) >= MAX_LIBRARIES:  # fmt: skip
                raise ValueError(f"You have {MAX_LIBRARIES} libraries connected, the most: disconnect one first.")
            row = row or ZoteroLibrary(owner=owner, kind=kind, library_id=library_id, source=source)
            row.sealed_key, row.last_error = sealed_key, None
            row.state = "new" if row.state in ("refused", "off") else row.state  # connected again: tried again
            session.add(row)
            session.commit()
            return row

    def of(self, owner: str) -> list[ZoteroLibrary]:
        with Session(self.engine, expire_on_commit=False) as session:
            return list(session.exec(select(ZoteroLibrary).where(ZoteroLibrary.owner == owner)
                                     .order_by(ZoteroLibrary.id)))  # fmt: skip

    def get(self, owner: str | None, library: int) -> ZoteroLibrary | None:
        if not owner or not 0 < library < 2**62:
            return None
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.get(ZoteroLibrary, library)
            return row if row is not None and row.owner == owner else None

    def items(self, library: int) -> dict[str, ZoteroItem]:
        with Session(self.engine, expire_on_commit=False) as session:
            return {i.key: i for i in session.exec(select(ZoteroItem).where(ZoteroItem.library == library))}

    def lists(self, owner: str) -> list[tuple[LibraryList, list[str]]]:
        """The owner's named lists, by name, each with its papers' ids."""
        with Session(self.engine, expire_on_commit=False) as session:
            rows = list(session.exec(select(LibraryList).where(LibraryList.owner == owner).order_by(LibraryList.name)))
            ids = {r.id for r in rows}
            members: dict[int, list[str]] = {i: [] for i in ids}
            if ids:
                for m in session.exec(select(LibraryListPaper).where(LibraryListPaper.list_id.in_(ids))
                                      .order_by(LibraryListPaper.id)):  # fmt: skip
                    members[m.list_id].append(m.paper_id)
            return [(r, members[r.id]) for r in rows]

    def list_of(self, owner: str | None, list_id: int) -> tuple[LibraryList, list[str]] | None:
        if not owner or not 0 < list_id < 2**62:
            return None
        return next(((r, ids) for r, ids in self.lists(owner) if r.id == list_id), None)

    def kept(self, owner: str, paper_ids: list[str]) -> int:
        """The owner put these papers in their library themselves (an import): a Zotero item holding one of them no
        longer takes it out when the item is deleted in Zotero (`ZoteroItem.joined`). Returns the items changed."""
        if not paper_ids:
            return 0
        mine = select(ZoteroLibrary.id).where(ZoteroLibrary.owner == owner)
        with Session(self.engine) as session:
            done = session.execute(update(ZoteroItem).where(
                ZoteroItem.library.in_(mine), ZoteroItem.paper_id.in_(list(dict.fromkeys(paper_ids))),
                ZoteroItem.joined.is_(True)).values(joined=False))  # fmt: skip
            session.commit()
            return done.rowcount or 0

    def disconnect(self, owner: str, library: int) -> bool:
        """Forget a connected library, its items' record and its lists; the papers and PDFs it brought stay in the
        owner's library, as their own (their `Upload.origin` cleared: a library connected later under the same
        number never takes them for its strays)."""
        from retrieval.library.uploads import Upload

        row = self.get(owner, library)
        if row is None:
            return False
        with Session(self.engine) as session:
            session.execute(update(Upload).where(Upload.owner == owner, Upload.origin.like(f"zotero:{library}:%"))
                            .values(origin=None))  # fmt: skip
            lists = list(session.exec(select(LibraryList.id).where(LibraryList.zotero_library == library)))
            if lists:
                session.execute(delete(LibraryListPaper).where(LibraryListPaper.list_id.in_(lists)))
            session.execute(delete(LibraryList).where(LibraryList.zotero_library == library))
            session.execute(delete(ZoteroItem).where(ZoteroItem.library == library))
            session.execute(delete(ZoteroLibrary).where(ZoteroLibrary.id == library))
            session.commit()
        return True

    def update(self, library: int, **fields) -> None:
        update_row(self.engine, ZoteroLibrary, library, fields)
