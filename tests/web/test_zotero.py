"""Zotero libraries synced into a user's library (`web.zotero`, `jobs.zotero`, `ingest.harvest.zotero`), against
answers in the shapes Zotero documents (`tests/fixtures/zotero/README.md`): a first sync (papers joined by arXiv id
and DOI, a stored PDF made an upload, a "PDF" that is not one left out with why, a collection made a list), a second
that takes only what changed (a new item, a deleted item and its PDF, a renamed and a new collection), a third that
finds nothing changed; a key Zotero refuses, and a library too large for the user's room, each with its reason and
nothing written; the lists and the library exported for Zotero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.demo import DEMO_DIR
from ingest.http import PoliteClient
from jobs.queue import JobQueue, JobState
from retrieval.library.zotero import Libraries
from tests.conftest import first_pages
from tests.replay import Replay, public_resolver
from tests.retrieval.test_reading_lists import GRAPH, SPECTER, with_two_papers
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app, _run_jobs

FIXTURES = Path(__file__).parents[1] / "fixtures" / "zotero"
API, FILES = "api.zotero.org", "zoterofilestorage.s3.amazonaws.com"
PREFIX = "/users/4567890"
KEY = "P9NiFoyLeZu2bZNvvuQPDWsd"
SAME_SITE = {"Origin": "http://test"}


def _client(replay: Replay) -> PoliteClient:
    return PoliteClient(user_agent="ScholarLoom-test/0", allowed_hosts=[API, FILES], transport=replay.transport(),
                        resolve=public_resolver, sleep=lambda _s: None)  # fmt: skip


def _run(settings, replay: Replay) -> list:
    return _run_jobs(settings, replay, client=_client, seconds=90)


def _answer(replay: Replay, path: str, name: str | None, version: int, since: str | None = None, body=None,
            **headers) -> None:  # fmt: skip
    content = body if body is not None else (FIXTURES / name).read_text()
    count = len(json.loads(content)) if isinstance(json.loads(content), list) else 1
    when = (lambda r: r.url.params.get("since") == since) if since is not None else None
    replay.add("GET", API, PREFIX + path, content, when=when, times=1,
               headers={"Last-Modified-Version": str(version), "Total-Results": str(count), **headers})


@pytest.fixture
def instance(empty_instance):
    return with_two_papers(empty_instance)


async def test_a_library_syncs_what_changed_and_its_lists_export_for_zotero(instance, tmp_path):
    app = _app(instance, on_demand="off")
    ada = client_for(app, "jo")
    pdf = first_pages(DEMO_DIR / "pdfs" / "2004.07180.pdf", 2, tmp_path).read_bytes()
    replay = Replay()
    replay.add("GET", API, "/keys/current", FIXTURES / "keys_current.json", times=1)
    _answer(replay, "/collections", "collections_since_0.json", 10, "0")
    items = (FIXTURES / "items_since_0.json").read_text().replace('"__PDF_LENGTH__"', str(len(pdf)))
    _answer(replay, "/items", None, 10, "0", body=items)
    replay.add("GET", API, f"{PREFIX}/items/PDF23456/file", status=302, times=1,
               headers={"Location": f"https://{FILES}/4567890/PDF23456?signature=x"})
    replay.add("GET", FILES, "/4567890/PDF23456", pdf, times=1)
    replay.add("GET", API, f"{PREFIX}/items/HTML2345/file", b"<html>Sign in to read this article</html>", times=1)

    instance.uploads().join("jo", [SPECTER])  # in jo's library before Zotero: its deletion there leaves it here
    page = await ada.get("/me/zotero")
    assert page.status_code == 200 and "Connect and sync" in page.text
    bad = await ada.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": "short"},
                         headers=SAME_SITE)  # fmt: skip
    assert bad.status_code == 400 and "24 letters and digits" in bad.text
    connected = await ada.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY},
                               headers=SAME_SITE)  # fmt: skip
    assert connected.status_code == 303
    (row,) = Libraries(instance.catalog().engine).of("jo")
    queued = JobQueue(instance.catalog().engine).recent()[0]
    assert KEY not in row.sealed_key and KEY not in json.dumps(queued.arguments)  # sealed; the job names the row
    jobs = _run(instance, replay)
    sync = next(j for j in jobs if j.kind == "zotero")
    assert sync.state == JobState.DONE, sync.error
    sent = [r for r in replay.requests if r.url.host == API]
    assert all(r.headers["Zotero-API-Key"] == KEY and r.headers["Zotero-API-Version"] == "3" for r in sent)
    assert not any("Zotero-API-Key" in r.headers for r in replay.requests if r.url.host == FILES)  # not to S3

    library = instance.uploads()
    assert library.joined("jo") == [SPECTER]
    (upload,) = library.mine("jo")
    assert upload.filename == "Cohan et al. - SPECTER.pdf" and upload.state == "indexed"
    listing = (await ada.get("/me/zotero.md")).text
    assert "ada (zotero.org user 4567890): synced, version 10" in listing
    assert "- Scholarly documents: 2 papers" in listing  # SPECTER and its PDF
    note = sync.note or ""
    assert "1 joined" in note and "1 PDFs added" in note and "2 left out" in note, note
    report = json.dumps(sync.failures)
    assert "does not start with %PDF-" in report and "A Handbook of Things Not Held Here" in report, report

    # The second sync asks for what changed since version 10 only.
    replay.add("GET", API, f"{PREFIX}/items", b"[]", times=1, when=lambda r: r.url.params.get("format") == "versions",
               headers={"Last-Modified-Version": "14"})  # fmt: skip
    _answer(replay, "/collections", "collections_since_10.json", 14, "10")
    _answer(replay, "/items", "items_since_10.json", 14, "10")
    _answer(replay, "/deleted", "deleted_since_10.json", 14, "10")
    assert (await ada.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)).status_code == 303
    jobs = _run(instance, replay)
    assert jobs[0].kind == "zotero" and jobs[0].state == JobState.DONE, jobs[0].error
    # GRAPH is new (by its DOI); SPECTER, deleted in Zotero, stays (jo had it before); DialoGPT is not here
    assert library.joined("jo") == [GRAPH, SPECTER]
    assert library.mine("jo") == [] and not list(library.folder.glob("*.pdf"))  # its PDF went with it
    listing = (await ada.get("/me/zotero.md")).text
    assert "synced, version 14" in listing and "- Evaluation: 1 paper " in listing
    assert "Representations of papers: 0 papers" in listing and "Scholarly documents" not in listing
    assert "Fetching papers on request is switched off" in json.dumps(jobs[0].failures)

    # Nothing changed since: one request, and nothing written.
    replay.add("GET", API, f"{PREFIX}/items", b"", status=304, times=1, headers={"Last-Modified-Version": "14"})
    before = len(replay.requests)
    await ada.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)
    jobs = _run(instance, replay)
    assert jobs[0].state == JobState.DONE and "nothing changed since version 14" in jobs[0].note
    assert len(replay.requests) == before + 1

    (listed,) = [x for x in Libraries(instance.catalog().engine).lists("jo") if x[0].name == "Evaluation"]
    ris = await ada.get(f"/me/library/lists/{listed[0].id}.ris")
    assert ris.status_code == 200 and 'filename="Evaluation.ris"' in ris.headers["content-disposition"]
    assert "TI  - Construction of the Literature Graph in Semantic Scholar" in ris.text
    assert "10.18653/v1/N18-3011" in ris.text
    whole = await ada.get("/me/library/export.json")
    assert [i["title"] for i in whole.json()][:1] == ["Construction of the Literature Graph in Semantic Scholar"]
    assert (await client_for(app, "kim").get(f"/me/library/lists/{listed[0].id}.ris")).status_code == 404
    assert (await client_for(app).get("/me/library/export.ris")).status_code == 404

    # GRAPH deleted in Zotero: the sync put it in the library, so it leaves with its item.
    replay.add("GET", API, f"{PREFIX}/items", b"[]", times=1, when=lambda r: r.url.params.get("format") == "versions",
               headers={"Last-Modified-Version": "18"})  # fmt: skip
    _answer(replay, "/collections", None, 18, "14", body="[]")
    _answer(replay, "/items", None, 18, "14", body="[]")
    _answer(replay, "/deleted", None, 18, "14", body=json.dumps({"collections": [], "items": ["GRAPH234"]}))
    await ada.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)
    jobs = _run(instance, replay)
    assert jobs[0].kind == "zotero" and jobs[0].state == JobState.DONE and "1 removed" in jobs[0].note, jobs[0].error
    assert library.joined("jo") == [SPECTER]


async def test_a_refused_key_and_a_library_too_large_write_nothing(instance, tmp_path):
    app = _app(instance, on_demand="off", upload_quota_mb=1)
    ada = client_for(app, "kim")
    replay = Replay()
    replay.add("GET", API, "/keys/current", b"Invalid key", status=403, times=1)
    await ada.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY}, headers=SAME_SITE)
    jobs = _run(instance, replay)
    assert jobs[0].state == JobState.FAILED and "Zotero refused this key" in jobs[0].error
    listing = (await ada.get("/me/zotero.md")).text
    assert ": refused, version 0" in listing and "zotero.org/settings/keys" in listing
    assert instance.uploads().joined("kim") == [] and Libraries(instance.catalog().engine).lists("kim") == []

    # The same library with a working key, whose PDFs are larger than what is left of a 1 MB library.
    replay.add("GET", API, "/keys/current", FIXTURES / "keys_current.json", times=1)
    _answer(replay, "/collections", "collections_since_0.json", 10, "0")
    items = (FIXTURES / "items_since_0.json").read_text().replace('"__PDF_LENGTH__"', str(3 * 1024 * 1024))
    _answer(replay, "/items", None, 10, "0", body=items)
    await ada.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY}, headers=SAME_SITE)
    jobs = _run(instance, replay)
    assert jobs[0].state == JobState.FAILED and "This library's PDFs take 3.0 MB" in jobs[0].error, jobs[0].error
    assert "left of 1 MB" in jobs[0].error and "Nothing was synced" in jobs[0].error
    assert not any("/file" in r.url.path for r in replay.requests)  # refused before any download
    assert instance.uploads().joined("kim") == [] and instance.uploads().mine("kim") == []
    assert Libraries(instance.catalog().engine).lists("kim") == []
    assert not list(instance.uploads().folder.glob(".incoming-*"))
    listing = (await ada.get("/me/zotero.md")).text
    assert ": failed, version 0" in listing


def test_a_stored_key_opens_only_with_the_servers_secret():
    from retrieval.library.zotero import Sealer

    sealed = Sealer("a" * 48).seal(KEY)
    assert KEY not in sealed and sealed != Sealer("a" * 48).seal(KEY)  # a fresh nonce each time
    assert Sealer("a" * 48).open(sealed) == KEY
    assert Sealer("b" * 48).open(sealed) is None and Sealer("a" * 48).open("not sealed at all") is None


async def test_a_paper_imported_by_hand_stays_when_its_zotero_item_goes(instance):
    """A paper a sync put in the library (`ZoteroItem.joined`) that its owner then imports themselves is theirs: the
    item's deletion in Zotero no longer takes it out. Another user's item holding the same paper is not touched."""
    from sqlmodel import Session, select

    from retrieval.library.zotero import ZoteroItem, ZoteroLibrary

    app = _app(instance, on_demand="off")
    engine = instance.catalog().engine
    with Session(engine) as session:
        libraries = [ZoteroLibrary(owner=who, kind="user", library_id="1", source="web", sealed_key="x")
                     for who in ("jo", "kim")]  # fmt: skip
        session.add_all(libraries)
        session.flush()
        session.add_all(ZoteroItem(library=lib.id, key="GRAPH234", paper_id=GRAPH, joined=True) for lib in libraries)
        session.commit()
    instance.uploads().join("jo", [GRAPH])  # as the sync put it there
    bib = {"file": ("mine.bib", b"@article{g, doi = {10.18653/v1/N18-3011}}", "application/x-bibtex")}
    report = (await client_for(app, "jo").post("/api/library/import", files=bib, headers=SAME_SITE)).json()
    assert report["counts"]["joined"] == 1, report
    with Session(engine) as session:
        held = {lib.owner: item.joined for item, lib in session.exec(
            select(ZoteroItem, ZoteroLibrary).where(ZoteroItem.library == ZoteroLibrary.id))}  # fmt: skip
    assert held == {"jo": False, "kim": True}


def _first_sync(replay: Replay, pdf: bytes) -> None:
    replay.add("GET", API, "/keys/current", FIXTURES / "keys_current.json", times=1)
    _answer(replay, "/collections", "collections_since_0.json", 10, "0")
    items = (FIXTURES / "items_since_0.json").read_text().replace('"__PDF_LENGTH__"', str(len(pdf)))
    _answer(replay, "/items", None, 10, "0", body=items)
    replay.add("GET", API, f"{PREFIX}/items/PDF23456/file", status=302, times=1,
               headers={"Location": f"https://{FILES}/4567890/PDF23456?signature=x"})  # fmt: skip
    replay.add("GET", FILES, "/4567890/PDF23456", pdf, times=1)
    replay.add("GET", API, f"{PREFIX}/items/HTML2345/file", b"<html>Sign in to read this article</html>", times=1)


async def test_a_sync_stopped_after_a_pdf_was_stored_does_not_store_it_twice(instance, tmp_path, monkeypatch):
    """The upload's row and the Zotero item's record of it are one transaction: a sync that stops right after a PDF
    became an upload (here: a crash as the store returns) is run again from the same version, and the PDF is not
    made a second upload."""
    from retrieval.library.uploads import Uploads

    app = _app(instance, on_demand="off")
    jo = client_for(app, "jo")
    pdf = first_pages(DEMO_DIR / "pdfs" / "2004.07180.pdf", 2, tmp_path).read_bytes()
    replay = Replay()
    _first_sync(replay, pdf)
    stored = Uploads.accept

    def crash_after(self, *args, **kwargs):
        stored(self, *args, **kwargs)
        raise RuntimeError("the worker died here")

    monkeypatch.setattr(Uploads, "accept", crash_after)
    await jo.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY}, headers=SAME_SITE)
    sync = next(j for j in _run(instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.FAILED and "died here" in sync.error
    assert len(instance.uploads().mine("jo")) == 1
    monkeypatch.setattr(Uploads, "accept", stored)
    (row,) = Libraries(instance.catalog().engine).of("jo")
    assert row.version == 0  # not kept as synced: the next sync starts from the same version
    _first_sync(replay, pdf)
    await jo.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)
    sync = next(j for j in _run(instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.DONE and "0 PDFs added" in sync.note, (sync.error, sync.note)
    (upload,) = instance.uploads().mine("jo")
    assert upload.filename == "Cohan et al. - SPECTER.pdf"
    assert Libraries(instance.catalog().engine).of("jo")[0].version == 10


async def test_an_older_pdf_left_by_a_stopped_sync_is_deleted_by_the_next(instance, tmp_path, monkeypatch):
    """A PDF replaced in Zotero: the new one is stored, then the old deleted. A sync stopped between the two left
    the old upload, which no item records; the next sync finds it by its origin and deletes it. A library
    disconnected leaves its PDFs as the owner's own: none is taken for a stray later."""
    import jobs.zotero

    app = _app(instance, on_demand="off")
    jo = client_for(app, "jo")
    pdf = first_pages(DEMO_DIR / "pdfs" / "2004.07180.pdf", 2, tmp_path).read_bytes()
    (tmp_path / "newer").mkdir()
    newer = first_pages(DEMO_DIR / "pdfs" / "2004.07180.pdf", 3, tmp_path / "newer").read_bytes()
    replay = Replay()
    _first_sync(replay, pdf)
    await jo.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY}, headers=SAME_SITE)
    assert next(j for j in _run(instance, replay) if j.kind == "zotero").state == JobState.DONE
    (first,) = instance.uploads().mine("jo")
    (row,) = Libraries(instance.catalog().engine).of("jo")
    assert first.origin == f"zotero:{row.id}:PDF23456"

    attachment = next(i for i in json.loads((FIXTURES / "items_since_0.json").read_text()) if i["key"] == "PDF23456")
    attachment["version"] = attachment["data"]["version"] = 12
    attachment["data"]["md5"], attachment["links"]["enclosure"]["length"] = "0" * 32, str(len(newer))

    def replaced(times: int = 1) -> None:
        replay.add("GET", API, f"{PREFIX}/items", b"[]", times=times,
                   when=lambda r: r.url.params.get("format") == "versions", headers={"Last-Modified-Version": "12"})
        _answer(replay, "/collections", None, 12, "10", body="[]")
        _answer(replay, "/items", None, 12, "10", body=json.dumps([attachment]))
        _answer(replay, "/deleted", None, 12, "10", body=json.dumps({"collections": [], "items": []}))
        replay.add("GET", API, f"{PREFIX}/items/PDF23456/file", newer, times=1)  # fmt: skip

    def stop(*_args) -> None:
        raise RuntimeError("the worker died here")

    replaced()
    monkeypatch.setattr(jobs.zotero, "_drop_upload", stop)  # stops after the new PDF is stored, before the old goes
    await jo.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)
    sync = next(j for j in _run(instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.FAILED and len(instance.uploads().mine("jo")) == 2
    monkeypatch.undo()
    replaced()
    await jo.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)
    sync = next(j for j in _run(instance, replay) if j.kind == "zotero")
    assert sync.state == JobState.DONE and "0 PDFs added" in sync.note, (sync.error, sync.note)
    (kept,) = instance.uploads().mine("jo")
    assert kept.id != first.id and kept.size == len(newer)

    assert (await jo.post(f"/me/zotero/{row.id}/disconnect", headers=SAME_SITE)).status_code == 303
    (kept,) = instance.uploads().mine("jo")
    assert kept.origin is None
