"""A Zotero library synced into its owner's library: the `zotero` job (`ingest.harvest.zotero` reads it).

A sync asks Zotero only for what changed since the version the last one reached. Each item with an arXiv id, a DOI
or a title joins the owner's library as `jobs.requests.import_entries` decides (a paper held here joins; an arXiv
paper that is not here is fetched on request, within the owner's share); each PDF stored in Zotero becomes a private
upload; each collection is a named list of the owner's (`retrieval.library.zotero`); a deleted or trashed item
leaves, its upload deleted. Before anything is written, every check is made and the PDFs downloaded
(`jobs.zotero_plan`): a library with too many items or larger than the owner's room, or a key Zotero refuses, ends
the job with its reason and nothing written; a file that is not a PDF is left out, named with why. The library's
version is stored last, so a sync stopped half way (a crash, the network, its most files or minutes) is done again
from the same version, and what it had written is matched by item keys, not added twice.

The Zotero desktop on the server's machine (the local API) is the admin's own library: only an admin may sync it,
checked again by each sync (the owner may have lost admin since); a library of someone else is switched off.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone

from sqlalchemy import delete
from sqlmodel import Session, func, select

from ingest.harvest.zotero import Zotero, ZoteroChanged, ZoteroRefused, ZoteroTooLarge
from ingest.http import FetchError
from ingest.report import Failure, Summary
from jobs.arguments import JobKind, ZoteroArguments
from jobs.context import JobContext, JobIncomplete, Progress
from jobs.queue import Job, JobQueue, JobState
from jobs.requests import ImportReport, import_entries
from jobs.zotero_plan import Plan, SyncRefused, plan_sync, too_many
from retrieval.archive import Archive
from retrieval.library.reading_lists import MAX_ENTRIES, Entry
from retrieval.library.uploads import Upload, UploadRefused
from retrieval.library.zotero import Libraries, LibraryList, LibraryListPaper, ZoteroItem, ZoteroLibrary

log = logging.getLogger(__name__)

ADMINS_ONLY = ("Only an admin may sync the Zotero desktop of this server, so this library is switched off: connect "
               "your library at zotero.org with a key instead.")  # fmt: skip


def _now() -> datetime:
    return datetime.now(timezone.utc)


def sync_zotero(ctx: JobContext, args: ZoteroArguments, summary: Summary, progress: Progress) -> str:
    """The `zotero` job: one library of one user (`args`: library, owner, on_demand, daily)."""
    if ctx.sealer is None:
        raise JobIncomplete("this server has no secret to open Zotero keys with (SCHOLARLOOM_AUTH_SECRET)")
    libraries = Libraries(ctx.writer.catalog.engine)
    row = libraries.get(args.owner, int(args.library))
    if row is None:
        return "the library was disconnected before its sync ran"
    if row.source == "local" and not ctx.is_admin(row.owner):
        libraries.update(row.id, state="off", last_error=ADMINS_ONLY)
        raise SyncRefused(ADMINS_ONLY)
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


def _sync(ctx: JobContext, libraries: Libraries, row: ZoteroLibrary, args: ZoteroArguments, summary: Summary,
          progress: Progress) -> str:  # fmt: skip
    deadline = time.monotonic() + ctx.limits.zotero_seconds
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
    with ctx.fetcher() as client:
        zotero = Zotero(client, base, row.prefix, key)
        name = zotero.name() if row.state != "synced" or not row.name else row.name
        try:
            changes = zotero.changes(row.version, most=MAX_ENTRIES)
        except ZoteroTooLarge as large:
            raise too_many(large.total) from None
        if changes is None:
            libraries.update(row.id, last_synced_at=_now(), last_error=None, state="synced", name=name)
            return f"Zotero {name}: nothing changed since version {row.version}"
        plan = plan_sync(ctx, zotero, row, changes, held, progress, deadline, _share_left(libraries.engine, row.owner))
    try:
        written = _write(ctx, libraries, row, changes.collections, changes.deleted_collections, held, plan, args,
                         summary)  # fmt: skip
    finally:
        plan.discard()  # what was not stored (a file is moved into the store when it is)
    if plan.stopped:  # the same changes are read again next time: the files stored are known, the rest taken
        libraries.update(row.id, state="partial", name=name, last_synced_at=_now(), last_error=plan.stopped)
        return f"Zotero {name}: {plan.stopped} Version {row.version} kept; {written}"
    libraries.update(row.id, version=changes.version, state="synced", name=name, last_synced_at=_now(),
                     last_error=None)  # fmt: skip
    return f"Zotero {name}: version {row.version} to {changes.version}; {written}"


def _share_left(engine, owner: str) -> int:
    """The jobs the owner may still queue (this sync's own counted) in the queue its PDFs' readings join (`_write`):
    a file past it would be downloaded only to be refused."""
    queue = JobQueue(engine)
    with Session(engine) as session:
        live = session.exec(select(func.count()).select_from(Job).where(
            Job.asked_by == owner, Job.state.in_([JobState.QUEUED, JobState.RUNNING]))).one()  # fmt: skip
    return max(0, queue.user_live - live)


def _write(ctx: JobContext, libraries: Libraries, row: ZoteroLibrary, collections: list[dict],
           deleted_collections: list[str], held: dict[str, ZoteroItem], plan: Plan, args: ZoteroArguments,
           summary: Summary) -> str:  # fmt: skip
    owner, engine = row.owner, libraries.engine
    queue = JobQueue(engine)
    archive = Archive(ctx.writer.catalog, ctx.writer.index, ctx.writer.embedder)
    # Items: each joins as the reading-list import decides (labelled by its key, to know which became what).
    keyed = [Entry(k, e.arxiv_id, e.doi, e.title, e.problem) for k, e in plan.entries.items()]
    before = set(ctx.uploads.joined(owner))  # (a paper already here stays when its Zotero item is deleted)
    report = import_entries(archive, ctx.uploads, queue, owner, f"Zotero {row.prefix}", keyed,
                            on_demand=args.on_demand, daily=int(args.daily))  # fmt: skip
    for key, why in report.not_found + report.rejected:
        summary.fail(Failure(JobKind.ZOTERO, plan.labels.get(key, key), why))
    for label, why in plan.left_out:
        summary.fail(Failure(JobKind.ZOTERO, label, why))
    _record_items(engine, row, plan, report, before)
    added = _store_files(ctx, row, held, plan, queue, summary)
    removed = _remove(ctx, engine, row, plan.gone)
    _drop_strays(ctx, engine, row)
    lists = _lists(engine, row, collections, deleted_collections)
    summary.add("items joined", len(report.joined))
    summary.add("papers requested", len(report.requested))
    summary.add("PDFs added", added)
    return (f"{len(report.joined)} joined, {len(report.requested)} requested from arXiv, {added} PDFs added, "
            f"{len(report.not_found) + len(report.rejected) + len(plan.left_out)} left out, {removed} removed, "
            f"{lists} lists")  # fmt: skip


def _item(session: Session, row: ZoteroLibrary, plan: Plan, key: str) -> ZoteroItem:
    """The item's record (a new one if there is none), its version and label as this sync read them."""
    item = session.exec(select(ZoteroItem).where(ZoteroItem.library == row.id, ZoteroItem.key == key)).first()
    item = item or ZoteroItem(library=row.id, key=key)
    item.version, item.label = plan.versions.get(key, 0), plan.labels.get(key, key)
    return item


def _record_items(engine, row: ZoteroLibrary, plan: Plan, report: ImportReport, before: set[str]) -> None:
    """What each item became; and each file left out for what it is, by its md5, so no later sync downloads it
    again (a sync stopped at its most files would otherwise spend them on the same files each time)."""
    became = {k: p for k, p in report.joined} | {k: a for k, a in report.requested}
    with Session(engine) as session:
        for key in plan.entries:
            item = _item(session, row, plan, key)
            if item.id is None or item.paper_id != became.get(key):
                item.joined = became.get(key) not in before
            item.paper_id, item.collections = became.get(key), plan.collections.get(key, [])
            session.add(item)
        for key, (md5, parent) in plan.unfit.items():
            item = _item(session, row, plan, key)
            item.md5, item.parent = md5, str(parent) if parent else None
            session.add(item)
        session.commit()


def _store_files(ctx: JobContext, row: ZoteroLibrary, held: dict[str, ZoteroItem], plan: Plan, queue: JobQueue,
                 summary: Summary) -> int:  # fmt: skip
    """The downloaded PDFs made uploads (each replacing the item's older one); returns how many."""
    added = 0
    for key, (spooled, filename, md5, parent) in plan.files.items():
        old = held.get(key)

        def record(session: Session, upload, key=key, md5=md5, parent=parent) -> None:
            """The item's record of its upload, written with the upload's row: a crash between the two cannot leave
            an upload the item does not know, made again by the next sync."""
            item = _item(session, row, plan, key)
            item.upload_id, item.md5, item.parent = upload.id, md5, str(parent) if parent else None
            session.add(item)

        try:
            ctx.uploads.accept(row.owner, filename, spooled, ctx.limits.upload, queue, also=record,
                               origin=f"{JobKind.ZOTERO}:{row.id}:{key}")  # fmt: skip
        except UploadRefused as refused:  # (the owner's share or room taken meanwhile): the next sync tries again
            summary.fail(Failure(JobKind.ZOTERO, plan.labels.get(key, key), str(refused)))
            plan.stopped = plan.stopped or f"A PDF could not be stored ({refused}); sync again to take the rest."
            continue
        if old is not None and old.upload_id:
            _drop_upload(ctx, row.owner, old.upload_id)
        added += 1
    return added


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
            Upload.owner == row.owner, Upload.origin.like(f"{JobKind.ZOTERO}:{row.id}:%"), Upload.id.not_in(recorded))))
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
