"""What a Zotero sync may take before it writes (`jobs.zotero_plan`), against answers in the shapes Zotero documents
(`tests/fixtures/zotero/README.md`): PDFs of no declared length stop the downloads at the first byte past the
owner's room; a library whose first page of items counts more than a sync reads is refused after that page; a sync
stops at its most files or minutes, stores what it took, and the next ones take the rest."""

from __future__ import annotations

import json

from jobs.queue import JobState
from retrieval.library.zotero import Libraries
from tests.replay import Replay
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app
from tests.web.test_zotero import API, FIXTURES, KEY, PREFIX, SAME_SITE, _answer, _run

KB = 1024


def _pdf(n: int, size: int = 200 * KB) -> bytes:
    head = f"%PDF-1.4\n% paper {n}\n".encode()
    return head + b"0" * (size - len(head))


def _attachments(count: int) -> list[dict]:
    """Stored PDFs whose `links.enclosure` gives no `length` (Zotero omits it for some files)."""
    items = []
    for n in range(count):
        key = f"PDF{n:05d}"
        enclosure = {"type": "application/pdf", "href": f"https://{API}{PREFIX}/items/{key}/file/view"}
        items.append({"key": key, "version": 9, "links": {"enclosure": enclosure},
                      "data": {"key": key, "version": 9, "itemType": "attachment", "linkMode": "imported_file",
                               "title": f"Paper {n}", "contentType": "application/pdf", "filename": f"paper {n}.pdf",
                               "md5": f"{n:032x}", "collections": []}})  # fmt: skip
    return items


def _library(replay: Replay, count: int) -> None:
    """One sync's answers: the key, no collection, `count` stored PDFs of 200 kB, each file served once."""
    replay.add("GET", API, "/keys/current", FIXTURES / "keys_current.json", times=1)
    _answer(replay, "/collections", None, 10, "0", body="[]")
    _answer(replay, "/items", None, 10, "0", body=json.dumps(_attachments(count)))


def _files(replay: Replay) -> list[str]:
    return [r.url.path for r in replay.requests if r.url.path.endswith("/file")]


async def test_pdfs_of_unknown_length_stop_at_the_first_byte_past_the_room(empty_instance):
    """40 PDFs of 200 kB, none with a declared length, for a user with 2 MB of room: the downloads stop at the
    eleventh (the first past the room), their spooled files deleted, and nothing is written."""
    app = _app(empty_instance, on_demand="off", upload_quota_mb=2)
    replay = Replay()
    _library(replay, 40)
    for n in range(40):
        replay.add("GET", API, f"{PREFIX}/items/PDF{n:05d}/file", _pdf(n), times=1)
    connected = await client_for(app, "kim").post("/me/zotero", data={"kind": "user", "library_id": "4567890",
                                                                      "key": KEY}, headers=SAME_SITE)  # fmt: skip
    assert connected.status_code == 303
    sync = next(j for j in _run(empty_instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.FAILED
    assert "This library's PDFs take more than 2.0 MB; your library has 2.0 MB left of 2 MB" in sync.error, sync.error
    assert "Nothing was synced" in sync.error
    assert len(_files(replay)) == 2 * 1024 * KB // (200 * KB) + 1 == 11  # 10 fit; the 11th is where it stops
    uploads = empty_instance.uploads()
    assert not list(uploads.folder.glob(".incoming-zotero-*"))
    assert uploads.mine("kim") == [] and uploads.used_bytes("kim") == 0
    libraries = Libraries(empty_instance.catalog().engine)
    (row,) = libraries.of("kim")
    assert (row.state, row.version) == ("failed", 0) and libraries.items(row.id) == {}


async def test_a_library_counting_more_items_than_a_sync_reads_is_refused_after_one_page(empty_instance):
    """The first page of items says 2,001 (`Total-Results`, attachments and notes included): no second page, no
    file, nothing written."""
    app = _app(empty_instance, on_demand="off")
    replay = Replay()
    replay.add("GET", API, "/keys/current", FIXTURES / "keys_current.json", times=1)
    _answer(replay, "/collections", None, 10, "0", body="[]")
    _answer(replay, "/items", None, 10, "0", body=json.dumps(_attachments(100)), **{"Total-Results": "2001"})
    await client_for(app, "kim").post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY},
                                      headers=SAME_SITE)  # fmt: skip
    sync = next(j for j in _run(empty_instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.FAILED and "has 2,001 items to read" in sync.error, sync.error
    assert "at most 2,000" in sync.error
    assert len([r for r in replay.requests if r.url.path == f"{PREFIX}/items"]) == 1 and _files(replay) == []
    assert empty_instance.uploads().mine("kim") == []
    assert Libraries(empty_instance.catalog().engine).of("kim")[0].version == 0


async def test_a_sync_stops_at_its_most_files_or_minutes_and_the_next_takes_the_rest(empty_instance):
    """Five PDFs, at most two files a sync: two are stored and the library's version is kept, so the next sync reads
    the same changes and downloads only what it has not stored; a sync out of time stops after one file; the last
    takes what is left and reaches the version."""
    app = _app(empty_instance, on_demand="off")
    kim = client_for(app, "kim")
    replay = Replay()
    for n in range(5):  # each file answers once: a file downloaded twice fails the sync
        replay.add("GET", API, f"{PREFIX}/items/PDF{n:05d}/file", _pdf(n, 4 * KB), times=1)
    libraries = Libraries(empty_instance.catalog().engine)

    async def sync(files: int, minutes: float, connect: bool = False):
        empty_instance.zotero_sync_files, empty_instance.zotero_sync_minutes = files, minutes
        _library(replay, 5)
        if connect:
            await kim.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY}, headers=SAME_SITE)
        else:
            await kim.post(f"/me/zotero/{libraries.of('kim')[0].id}/sync", headers=SAME_SITE)
        return next(j for j in _run(empty_instance, replay) if j.kind == "zotero")

    first = await sync(2, 10.0, connect=True)
    assert first.state == JobState.DONE and "stopped after 2 of 5 files" in first.note, (first.error, first.note)
    assert "SCHOLARLOOM_ZOTERO_SYNC_FILES" in first.note and "2 PDFs added" in first.note
    (row,) = libraries.of("kim")
    assert (row.state, row.version, len(empty_instance.uploads().mine("kim"))) == ("partial", 0, 2)
    assert "sync again to take the rest" in row.last_error
    second = await sync(100, 1e-9)  # out of time at once: one file, so each sync still takes one
    assert second.state == JobState.DONE and "stopped after 1 of 3 files" in second.note, (second.error, second.note)
    assert "SCHOLARLOOM_ZOTERO_SYNC_MINUTES" in second.note
    last = await sync(100, 10.0)
    assert last.state == JobState.DONE and "2 PDFs added" in last.note, (last.error, last.note)
    (row,) = libraries.of("kim")
    assert (row.state, row.version, row.last_error) == ("synced", 10, None)
    assert len(empty_instance.uploads().mine("kim")) == 5 and len(_files(replay)) == 5


async def test_a_sync_downloads_no_more_files_than_its_owners_share_of_the_queue_takes(empty_instance, monkeypatch):
    """Each PDF stored queues its reading, which waits for the sync: with three live jobs a user (the sync is one),
    a sync downloads two files, not five of which three would be refused when stored."""
    import functools

    import jobs.zotero
    from jobs.queue import JobQueue

    monkeypatch.setattr(jobs.zotero, "JobQueue", functools.partial(JobQueue, user_live=3))
    app = _app(empty_instance, on_demand="off")
    replay = Replay()
    _library(replay, 5)
    for n in range(5):
        replay.add("GET", API, f"{PREFIX}/items/PDF{n:05d}/file", _pdf(n, 4 * KB), times=1)
    await client_for(app, "kim").post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY},
                                      headers=SAME_SITE)  # fmt: skip
    sync = next(j for j in _run(empty_instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.DONE and "stopped after 2 of 5 files" in sync.note, (sync.error, sync.note)
    assert "SCHOLARLOOM_USER_JOBS" in sync.note and sync.failures == []
    assert len(_files(replay)) == 2 and len(empty_instance.uploads().mine("kim")) == 2
