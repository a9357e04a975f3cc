"""What a Zotero sync (`jobs.zotero`) will write, decided before its first write: the changed items sorted into
entries, files and deletions, the library's size checked, and the PDFs downloaded.

A sync holds the only job worker, so a library it will refuse is refused early: the items Zotero counts on the first
page of items (`Total-Results`) before any further page; the lengths Zotero declares before any download (a missing
length is unknown: at least a byte, never 0); and each download is given what is left of the owner's room as its
cap, so the first byte past the room ends it and the sync, its spooled files deleted. A sync also stops downloading
at its most files or seconds (`Limits.zotero_files`, `.zotero_seconds`, and only after one file, so every sync makes
headway), and at the owner's share of the queue (each PDF stored queues its reading, which waits for this job: a
file past the share would be downloaded for nothing). It then stores what it has and keeps the library's old
version, so the next sync reads the same changes and downloads only the files it has not stored or left out (both
known by their md5).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ingest.harvest.zotero import Changes, Zotero
from ingest.http import FetchError, FetchTooLarge
from jobs.context import JobContext
from retrieval.library.reading_lists import MAX_ENTRIES, Entry, read_zotero_item
from retrieval.library.uploads import UploadLimits
from retrieval.library.zotero import ZoteroItem, ZoteroLibrary

SKIPPED_TYPES = {"note", "annotation"}
STORED = {"imported_file", "imported_url"}  # attachments whose file Zotero stores (not links to files or pages)
MB = 1024 * 1024


class SyncRefused(RuntimeError):
    """The sync was refused before anything was written; the message says why and what to do."""


@dataclass(frozen=True)
class Wanted:
    """An attachment whose PDF the sync downloads."""

    key: str
    label: str
    data: dict
    length: int | None  # as Zotero declares it; None: unknown


@dataclass
class Plan:
    """What a sync will write, decided (and the PDFs downloaded) before the first write."""

    entries: dict[str, Entry] = field(default_factory=dict)  # item key -> what it names
    collections: dict[str, list[str]] = field(default_factory=dict)  # item key -> its collections
    labels: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    # item key -> (the downloaded file, spooled beside the uploads; its name; its md5; its parent item)
    files: dict[str, tuple[Path, str, str | None, str | None]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)  # item keys deleted or trashed
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (label, why)
    # attachment key -> (md5, parent) of a file left out for what it is (not a PDF, too large): recorded, so a later
    # sync does not download the same file again
    unfit: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    stopped: str = ""  # why the downloads stopped before the last ("": they did not)

    def discard(self) -> None:
        for spooled, *_ in self.files.values():
            spooled.unlink(missing_ok=True)


def too_many(total: int) -> SyncRefused:
    return SyncRefused(f"This Zotero library has {total:,} items to read (attachments and notes count); a sync "
                       f"here reads at most {MAX_ENTRIES:,}. Sync a group or a smaller library, or ask the admin.")


def plan_sync(ctx: JobContext, zotero: Zotero, row: ZoteroLibrary, changes: Changes, held: dict[str, ZoteroItem],
              progress, deadline: float, share: int) -> Plan:  # fmt: skip
    """What changed, sorted; the library's size checked; the PDFs downloaded (`deadline`: `time.monotonic()`'s;
    `share`: the jobs the owner may still queue)."""
    plan = Plan()
    try:
        wanted = _sort(changes, held, plan)
        top = {k for k, i in held.items() if i.parent is None} - plan.gone | set(plan.entries)
        if len(top) > MAX_ENTRIES:
            raise too_many(len(top))
        room = _room(ctx, row, held, plan, wanted)
        _download(ctx, zotero, row, plan, wanted, room, progress, (deadline, share))
    except BaseException:
        plan.discard()
        raise
    return plan


def _sort(changes: Changes, held: dict[str, ZoteroItem], plan: Plan) -> list[Wanted]:
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
            if (want := _wanted(item, data, item_key, label, held.get(item_key))) is not None:
                wanted.append(want)
            continue
        plan.entries[item_key] = read_zotero_item(data)
        plan.collections[item_key] = [str(c) for c in data.get("collections") or []]
    return wanted


def _wanted(item: dict, data: dict, key: str, label: str, known: ZoteroItem | None) -> Wanted | None:
    if data.get("contentType") != "application/pdf" or data.get("linkMode") not in STORED:
        return None  # a link, a web page or another kind of file: nothing of it is a paper
    if known and known.md5 and known.md5 == data.get("md5"):
        return None  # the same file as before: an upload already, or left out for what it is
    length = ((item.get("links") or {}).get("enclosure") or {}).get("length")
    return Wanted(key, label, data, int(length) if str(length).isdigit() else None)


def _room(ctx: JobContext, row: ZoteroLibrary, held: dict[str, ZoteroItem], plan: Plan, wanted: list[Wanted]) -> int:
    """The bytes the owner has left (and those the deleted items' uploads free), checked against what Zotero says
    the files take: a file of unknown length takes at least a byte."""
    limits = ctx.limits.upload
    room = limits.quota_bytes - ctx.uploads.used_bytes(row.owner)
    room += sum(_size(ctx, held[k].upload_id) for k in plan.gone if held[k].upload_id)
    said = sum(w.length for w in wanted if w.length is not None and w.length <= limits.max_bytes)
    unknown = sum(1 for w in wanted if w.length is None)
    if said + unknown > room:
        raise _no_room(said, room, limits, "at least " if unknown else "", unknown)
    return room


def _no_room(taken: int, room: int, limits: UploadLimits, bound: str = "", unknown: int = 0) -> SyncRefused:
    sizes = f" and {unknown} of unknown size" if unknown else ""
    return SyncRefused(f"This library's PDFs take {bound}{taken / MB:.1f} MB{sizes}; your library has "
                       f"{max(room, 0) / MB:.1f} MB left of {limits.quota_mb} MB. Nothing was synced: delete items "
                       "here, or in Zotero, and sync again.")  # fmt: skip


def _size(ctx: JobContext, upload_id: int) -> int:
    found = ctx.uploads.by_id(upload_id)
    return found.size if found else 0


def _download(ctx: JobContext, zotero: Zotero, row: ZoteroLibrary, plan: Plan, wanted: list[Wanted], room: int,
              progress, until: tuple[float, int]) -> None:  # fmt: skip
    """Each wanted PDF spooled beside the uploads, the running total kept within `room`, until the deadline or
    the most files (`until`); a file that is not a PDF or is over the upload cap left out, named with why."""
    limits, cap = ctx.limits, ctx.limits.upload.max_bytes
    deadline, most = until[0], min(limits.zotero_files, until[1])
    task = progress.add_task(f"Zotero {row.prefix}: PDFs", total=len(wanted))
    fetched = tried = 0
    for want in wanted:
        if tried >= most or (tried and time.monotonic() > deadline):
            plan.stopped = _stopped(tried, len(wanted), limits.zotero_files if tried >= most else None)
            return
        if want.length is not None and want.length > cap:  # said to be too large: not downloaded
            _unfit(plan, want, f"the file is larger than the limit of {limits.upload.max_mb} MB")
        elif fetched >= room:
            raise _no_room(room, room, limits.upload, "more than ")
        else:
            tried += 1
            fetched += _fetch(ctx, zotero, plan, want, room, fetched)
        progress.advance(task)


def _fetch(ctx: JobContext, zotero: Zotero, plan: Plan, want: Wanted, room: int, fetched: int) -> int:
    """One PDF spooled (its bytes returned), or left out; SyncRefused as soon as the bytes pass the `room`."""
    upload, left = ctx.limits.upload, room - fetched
    try:
        content = zotero.file(want.key, max_bytes=min(upload.max_bytes, left))
    except FetchTooLarge as exc:
        if left < upload.max_bytes and exc.limit >= left:  # the room was the cap: this file does not fit
            raise _no_room(room, room, upload, "more than ") from None
        _unfit(plan, want, f"the file is larger than the limit of {exc.limit / MB:.0f} MB")
        return 0
    except FetchError as exc:  # left out this time, asked for again by the next sync
        plan.left_out.append((want.label, f"Zotero did not give the file: {exc}"))
        return 0
    if not content.lstrip()[:1024].startswith(b"%PDF-"):
        _unfit(plan, want, "the attachment says it is a PDF, but the file does not start with %PDF-")
        return 0
    spooled = ctx.uploads.folder / f".incoming-zotero-{uuid.uuid4().hex}"
    spooled.write_bytes(content)
    data = want.data
    plan.files[want.key] = (spooled, str(data.get("filename") or f"{want.key}.pdf"), data.get("md5"),
                            data.get("parentItem"))  # fmt: skip
    return len(content)


def _unfit(plan: Plan, want: Wanted, why: str) -> None:
    plan.left_out.append((want.label, why))
    plan.unfit[want.key] = (want.data.get("md5"), want.data.get("parentItem"))


def _stopped(tried: int, wanted: int, files: int | None) -> str:
    """Why the downloads stopped: `files` is the most a sync takes when they reached a most (None: the time)."""
    if files is None:
        reached = "the longest one sync downloads (SCHOLARLOOM_ZOTERO_SYNC_MINUTES)"
    elif tried >= files:
        reached = "the most one sync downloads (SCHOLARLOOM_ZOTERO_SYNC_FILES)"
    else:
        reached = "as many as your share of jobs lets wait to be read (SCHOLARLOOM_USER_JOBS)"
    return (f"This sync stopped after {tried} of {wanted} files, {reached}; what it took is stored: sync again to "
            "take the rest.")  # fmt: skip
