"""A Zotero library synced into its owner's library: the `zotero` job (`ingest.harvest.zotero` reads it).

A sync asks Zotero only for what changed since the version the last one reached. Each item with an arXiv id, a DOI
or a title joins the owner's library as `jobs.requests.import_entries` decides (a paper held here joins; an arXiv
paper that is not here is fetched on request, within the owner's share); each PDF stored in Zotero becomes a private
upload; each collection is a named list of the owner's (`retrieval.library.zotero`); a deleted or trashed item
leaves, its upload deleted. Before anything is written, every check is made and every PDF downloaded: a library
larger than the owner's room, or a key Zotero refuses, ends the job with its reason and nothing written; a file
that is not a PDF is left out, named with why. The library's version is stored last, so a sync stopped half way
(a crash, the network) is done again from the same version, and what it had written is matched by item keys, not
added twice.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import delete
from sqlmodel import Session, select

from ingest.harvest.zotero import Zotero, ZoteroChanged, ZoteroRefused
from ingest.http import FetchError
from ingest.report import Failure, Summary
from jobs.context import JobContext, JobIncomplete
from jobs.queue import JobQueue
from jobs.requests import import_entries
from retrieval.archive import Archive
from retrieval.library.reading_lists import MAX_ENTRIES, Entry, read_zotero_item
from retrieval.library.uploads import Upload, UploadRefused
from retrieval.library.zotero import Libraries, LibraryList, LibraryListPaper, ZoteroItem, ZoteroLibrary

log = logging.getLogger(__name__)

ZOTERO_KIND = "zotero"
SKIPPED_TYPES = {"note", "annotation"}
STORED = {"imported_file", "imported_url"}  # attachments whose file Zotero stores (not links to files or pages)
MB = 1024 * 1024


class SyncRefused(RuntimeError):
    """The sync was refused before anything was written; the message says why and what to do."""


@dataclass
class Plan:
    """What a sync will write, decided (and every PDF downloaded) before the first write."""

    entries: dict[str, Entry] = field(default_factory=dict)  # item key -> what it names
    collections: dict[str, list[str]] = field(default_factory=dict)  # item key -> its collections
    labels: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    # item key -> (the downloaded file, spooled beside the uploads; its name; its md5; its parent item)
    files: dict[str, tuple[Path, str, str | None, str | None]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)  # item keys deleted or trashed
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (label, why)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def sync_zotero(ctx: JobContext, args: dict, summary: Summary, progress) -> str:
    """The `zotero` job: one library of one user (`args`: library, owner, on_demand, daily)."""
    if ctx.sealer is None:
        raise JobIncomplete("this server has no secret to open Zotero keys with (SCHOLARLOOM_AUTH_SECRET)")
    libraries = Libraries(ctx.writer.catalog.engine)
    row = libraries.get(args["owner"], int(args["library"]))
    if row is None:
        return "the library was disconnected before its sync ran"
    try:
        note = _sync(ctx, libraries, row, args, summary, progress)
    except ZoteroRefused as refused:
        libraries.update(row.id, state="refused", last_error=str(refused))
        raise SyncRefused(str(refused)) from None
    except SyncRefused as refused:
        libraries.update(row.id, state="failed", last_error=str(refused))
        raise
    except (FetchError, ZoteroChanged) as exc:
        libraries.update(row.id, last_error=f"the sync stopped: {exc}; run it again")
        raise JobIncomplete(f"Zotero or the network failed: {exc}. Nothing after version {row.version} was kept "
                            "as synced: run the sync again.") from exc  # fmt: skip
    return note


def _sync(ctx: JobContext, libraries: Libraries, row: ZoteroLibrary, args: dict, summary: Summary, progress) -> str:
    key = None
    if row.source == "web":
        key = ctx.sealer.open(row.sealed_key)
        if key is None:
            raise ZoteroRefused("The stored key cannot be opened (this server's secret changed since): connect the "
                                "library again with its key.")  # fmt: skip
    base = ctx.sources.zotero_url if row.source == "web" else ctx.sources.zotero_local_url
    if not base:
        raise SyncRefused("This server does not reach a Zotero desktop (SCHOLARLOOM_SOURCES__ZOTERO_LOCAL_URL).")
    held = libraries.items(row.id)
    plan = Plan()
    with ctx.fetcher() as client:
        zotero = Zotero(client, base, row.prefix, key)
        name = zotero.name() if row.state != "synced" or not row.name else row.name
        changes = zotero.changes(row.version)
        if changes is None:
            libraries.update(row.id, last_synced_at=_now(), last_error=None, state="synced", name=name)
            return f"Zotero {name}: nothing changed since version {row.version}"
        try:
            _plan(ctx, zotero, row, changes, held, plan, progress)
        except BaseException:
            for spooled, *_ in plan.files.values():
                spooled.unlink(missing_ok=True)
            raise
    written = _write(ctx, libraries, row, changes.collections, changes.deleted_collections, held, plan, args,
                     summary)  # fmt: skip
    libraries.update(row.id, version=changes.version, state="synced", name=name, last_synced_at=_now(),
                     last_error=None)  # fmt: skip
    return f"Zotero {name}: version {row.version} to {changes.version}; {written}"


def _plan(ctx: JobContext, zotero: Zotero, row: ZoteroLibrary, changes, held: dict[str, ZoteroItem], plan: Plan,
          progress) -> None:  # fmt: skip
    """What changed, sorted into entries, files and deletions; the library's size checked; the PDFs downloaded."""
    plan.gone = set(changes.deleted_items) & set(held)
    wanted = []
    for item in changes.items:
        data = item.get("data") or {}
        item_key = str(item.get("key") or data.get("key") or "")
        kind = data.get("itemType")
        label = str(data.get("title") or data.get("filename") or item_key)[:300]
        if not item_key or kind in SKIPPED_TYPES:
            continue
        if data.get("deleted"):  # in the trash: out of the library
            if item_key in held:
                plan.gone.add(item_key)
            continue
        plan.labels[item_key], plan.versions[item_key] = label, int(item.get("version") or data.get("version") or 0)
        if kind == "attachment":
            if data.get("contentType") != "application/pdf" or data.get("linkMode") not in STORED:
                continue  # a link, a web page or another kind of file: nothing of it is a paper
            known = held.get(item_key)
            if known and known.upload_id and known.md5 and known.md5 == data.get("md5"):
                continue  # the same file, already an upload
            length = ((item.get("links") or {}).get("enclosure") or {}).get("length")
            wanted.append((item_key, label, data, int(length) if str(length or "").isdigit() else 0))
            continue
        plan.entries[item_key] = read_zotero_item(data)
        plan.collections[item_key] = [str(c) for c in data.get("collections") or []]
    top = {k for k, i in held.items() if i.parent is None} - plan.gone | set(plan.entries)
    if len(top) > MAX_ENTRIES:
        raise SyncRefused(f"This Zotero library holds {len(top):,} items; a library here may hold at most "
                          f"{MAX_ENTRIES:,}. Sync a group or a smaller library, or ask the admin.")  # fmt: skip
    limits = ctx.limits.upload
    room = limits.quota_bytes - ctx.uploads.used_bytes(row.owner)
    room += sum(_size(ctx, held[k].upload_id) for k in plan.gone if held[k].upload_id)
    said = sum(length for *_, length in wanted)
    if said > room:
        raise SyncRefused(f"This library's PDFs take {said / MB:.1f} MB; your library has {max(room, 0) / MB:.1f} MB "
                          f"left of {limits.quota_mb} MB. Nothing was synced: delete items here, or in Zotero, "
                          "and sync again.")  # fmt: skip
    task = progress.add_task(f"Zotero {row.prefix}: PDFs", total=len(wanted))
    fetched = 0
    for item_key, label, data, _length in wanted:
        try:
            content = zotero.file(item_key)
        except FetchError as exc:
            plan.left_out.append((label, f"Zotero did not give the file: {exc}"))
            progress.advance(task)
            continue
        if not content.lstrip()[:1024].startswith(b"%PDF-"):
            plan.left_out.append((label, "the attachment says it is a PDF, but the file does not start with %PDF-"))
        elif len(content) > limits.max_bytes:
            plan.left_out.append((label, f"the file is larger than the limit of {limits.max_mb} MB"))
        else:
            spooled = ctx.uploads.folder / f".incoming-zotero-{uuid.uuid4().hex}"
            spooled.write_bytes(content)
            plan.files[item_key] = (spooled, str(data.get("filename") or f"{item_key}.pdf"), data.get("md5"),
                                    data.get("parentItem"))  # fmt: skip
            fetched += len(content)
        progress.advance(task)
    if fetched > room:
        raise SyncRefused(f"This library's PDFs take {fetched / MB:.1f} MB; your library has {max(room, 0) / MB:.1f}"
                          f" MB left of {limits.quota_mb} MB. Nothing was synced: delete items here, or in Zotero, "
                          "and sync again.")  # fmt: skip


def _size(ctx: JobContext, upload_id: int) -> int:
    found = ctx.uploads.by_id(upload_id)
    return found.size if found else 0


def _write(ctx: JobContext, libraries: Libraries, row: ZoteroLibrary, collections: list[dict],
           deleted_collections: list[str], held: dict[str, ZoteroItem], plan: Plan, args: dict,
           summary: Summary) -> str:  # fmt: skip
    owner, engine = row.owner, libraries.engine
    queue = JobQueue(engine)
    archive = Archive(ctx.writer.catalog, ctx.writer.index, ctx.writer.embedder)
    # Items: each joins as the reading-list import decides (labelled by its key, to know which became what).
    keyed = [Entry(k, e.arxiv_id, e.doi, e.title, e.problem) for k, e in plan.entries.items()]
    before = set(ctx.uploads.joined(owner))  # (a paper already here stays when its Zotero item is deleted)
    report = import_entries(archive, ctx.uploads, queue, owner, f"Zotero {row.prefix}", keyed,
                            on_demand=bool(args.get("on_demand")), daily=int(args.get("daily", 20)))  # fmt: skip
    became = {k: p for k, p in report.joined} | {k: a for k, a in report.requested}
    for key, why in report.not_found + report.rejected:
        summary.fail(Failure(ZOTERO_KIND, plan.labels.get(key, key), why))
    for label, why in plan.left_out:
        summary.fail(Failure(ZOTERO_KIND, label, why))
    added = 0
    with Session(engine) as session:
        for key in plan.entries:
            item = session.exec(select(ZoteroItem).where(ZoteroItem.library == row.id, ZoteroItem.key == key)).first()
            item = item or ZoteroItem(library=row.id, key=key)
            item.version, item.label = plan.versions.get(key, 0), plan.labels.get(key, key)
            if item.id is None or item.paper_id != became.get(key):
                item.joined = became.get(key) not in before
            item.paper_id, item.collections = became.get(key), plan.collections.get(key, [])
            session.add(item)
        session.commit()
    for key, (spooled, filename, md5, parent) in plan.files.items():
        old = held.get(key)

        def record(session: Session, upload, key=key, md5=md5, parent=parent) -> None:
            """The item's record of its upload, written with the upload's row: a crash between the two cannot leave
            an upload the item does not know, made again by the next sync."""
            item = session.exec(select(ZoteroItem).where(ZoteroItem.library == row.id, ZoteroItem.key == key)).first()
            item = item or ZoteroItem(library=row.id, key=key)
            item.version, item.label, item.upload_id = plan.versions.get(key, 0), plan.labels.get(key, key), upload.id
            item.md5, item.parent = md5, str(parent) if parent else None
            session.add(item)

        try:
            ctx.uploads.accept(owner, filename, spooled, ctx.limits.upload, queue, also=record,
                               origin=f"{ZOTERO_KIND}:{row.id}:{key}")  # fmt: skip
        except UploadRefused as refused:
            summary.fail(Failure(ZOTERO_KIND, plan.labels.get(key, key), str(refused)))
            continue
        if old is not None and old.upload_id:
            _drop_upload(ctx, owner, old.upload_id)
        added += 1
    removed = _remove(ctx, engine, row, plan.gone)
    _drop_strays(ctx, engine, row)
    lists = _lists(engine, row, collections, deleted_collections)
    summary.add("items joined", len(report.joined))
    summary.add("papers requested", len(report.requested))
    summary.add("PDFs added", added)
    return (f"{len(report.joined)} joined, {len(report.requested)} requested from arXiv, {added} PDFs added, "
            f"{len(report.not_found) + len(report.rejected) + len(plan.left_out)} left out, {removed} removed, "
            f"{lists} lists")  # fmt: skip


def _drop_upload(ctx: JobContext, owner: str, upload_id: int) -> None:
    found = ctx.uploads.get(owner, upload_id)
    if found is not None:
        ctx.uploads.delete(found, ctx.writer.index)


def _drop_strays(ctx: JobContext, engine, row: ZoteroLibrary) -> int:
    """The library's uploads no item records: an older version of a PDF, left by a sync that stopped between
    storing the new one and deleting the old (found by `Upload.origin`). Returns how many were deleted."""
    recorded = select(ZoteroItem.upload_id).where(ZoteroItem.library == row.id, ZoteroItem.upload_id.is_not(None))
    with Session(engine) as session:
        strays = list(session.exec(select(Upload.id).where(
            Upload.owner == row.owner, Upload.origin.like(f"{ZOTERO_KIND}:{row.id}:%"), Upload.id.not_in(recorded))))
    for upload_id in strays:
        _drop_upload(ctx, row.owner, upload_id)
    return len(strays)


def _remove(ctx: JobContext, engine, row: ZoteroLibrary, gone: set[str]) -> int:
    """Deleted or trashed items leave: a paper the sync put in the library (`ZoteroItem.joined`: not one that was
    there before) that no other Zotero item of the owner's holds leaves it, an upload is deleted; the item's record
    goes last (a failure half way is done again next time)."""
    if not gone:
        return 0
    with Session(engine, expire_on_commit=False) as session:
        rows = list(session.exec(select(ZoteroItem).where(ZoteroItem.library == row.id, ZoteroItem.key.in_(gone))))
        mine = select(ZoteroLibrary.id).where(ZoteroLibrary.owner == row.owner)
        leaving = {i.id for i in rows}
        others = {i.paper_id for i in session.exec(select(ZoteroItem).where(ZoteroItem.library.in_(mine)))
                  if i.id not in leaving}  # fmt: skip
    for item in rows:
        if item.paper_id and item.joined and item.paper_id not in others:
            ctx.uploads.leave(row.owner, item.paper_id)
        if item.upload_id:
            _drop_upload(ctx, row.owner, item.upload_id)
    with Session(engine) as session:
        session.execute(delete(ZoteroItem).where(ZoteroItem.id.in_([i.id for i in rows])))
        session.commit()
    return len(rows)


def _lists(engine, row: ZoteroLibrary, collections: list[dict], deleted: list[str]) -> int:
    """The library's collections as the owner's named lists, and each list's papers (and uploads) made again from
    the items' collections (an attachment sits where its parent does)."""
    with Session(engine) as session:
        lists = {r.collection_key: r for r in session.exec(select(LibraryList).where(
            LibraryList.zotero_library == row.id))}  # fmt: skip
        for data in collections:
            key = str(data.get("key") or "")
            if not key:
                continue
            if data.get("deleted"):
                deleted = [*deleted, key]
                continue
            found = lists.get(key) or LibraryList(owner=row.owner, zotero_library=row.id, collection_key=key,
                                                  name="")  # fmt: skip
            found.name = str(data.get("name") or key)[:300]
            session.add(found)
            lists[key] = found
        for key in deleted:
            if key in lists and lists[key].id is not None:
                session.execute(delete(LibraryListPaper).where(LibraryListPaper.list_id == lists[key].id))
                session.delete(lists.pop(key))
            else:
                lists.pop(key, None)
        session.flush()
        items = list(session.exec(select(ZoteroItem).where(ZoteroItem.library == row.id)))
        parents = {i.key: i for i in items}
        ids = [r.id for r in lists.values()]
        if ids:
            session.execute(delete(LibraryListPaper).where(LibraryListPaper.list_id.in_(ids)))
        pairs = set()
        for item in items:
            where = (parents[item.parent].collections if item.parent in parents else []) if item.parent else \
                item.collections  # fmt: skip
            member = f"upload:{item.upload_id}" if item.upload_id else item.paper_id
            for key in where or []:
                if member and key in lists:
                    pairs.add((lists[key].id, member))
        session.add_all(LibraryListPaper(list_id=list_id, paper_id=paper_id) for list_id, paper_id in sorted(pairs))
        session.commit()
        return len(lists)
