"""A user's own PDFs over HTTP: `/api/library` and `/me/library` on the app, its checks (sign-in, origin, PDF,
size, quota), the job that indexes the file, and everything another user or a visitor could ask: none of it finds
the upload by its full text, its title or its id (the same 404 as an id that does not exist)."""

from __future__ import annotations

import re

import pytest

from auth.tokens import create_token
from jobs.queue import JobQueue
from jobs.arguments import JobKind
from retrieval.library.uploads import UploadState
from retrieval.vectors.index import ANYONE, Filters
from tests.conftest import PDFS
from tests.replay import Replay
from tests.retrieval.test_reading_lists import with_two_papers
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app, _run_jobs
from tests.web.test_tokens import bearer

LONGEVAL = (PDFS / "2023.eacl-main.121.pdf").read_bytes()
TITLE = "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization"
PHRASE = "guidelines for human evaluation of faithfulness in long-form summarization"
SAME_SITE = {"Origin": "http://test"}


def _file(data: bytes = LONGEVAL, name: str = "longeval.pdf") -> dict:
    return {"file": (name, data, "application/pdf")}


async def _everything_public(client, upload_id: int) -> str:
    """What a visitor or another user can read that could show the upload: searches (JSON and page), lists,
    feeds, the sitemap, llms.txt, its addresses."""
    texts = []
    asked = [("/api/passages", {"q": PHRASE}), ("/api/search", {"q": PHRASE}), ("/search", {"q": TITLE}),
             ("/api/search", {"q": "LongEval"}), ("/papers", {}), ("/sitemap.xml", {}), ("/llms.txt", {}),
             ("/feeds/papers.xml", {}), ("/api/passages", {"q": PHRASE, "paper": f"upload:{upload_id}"}),
             # the upload spells out "Kalpesh Krishna (KK)": a search reads a name as the texts it may see spell it
             ("/api/search", {"q": "KK Allen"}), ("/api/passages", {"q": "KK Allen"}), ("/search", {"q": "KK Allen"})]
    for path, params in asked:
        answer = await client.get(path, params=params)
        assert answer.status_code in (200, 404), path
        texts.append(answer.text)
    for path in (f"/me/library/{upload_id}", f"/api/library/{upload_id}", f"/papers/upload:{upload_id}"):
        answer = await client.get(path)
        assert answer.status_code in (401, 404), path
        texts.append(answer.text.replace(f"/me/library/{upload_id}", "").replace(f"upload:{upload_id}", ""))
    return "\n".join(texts)


# What only the upload holds: its id and address, its file name, its authors and words of its body that no
# query above contains (the searches echo their query, so the title's words alone prove nothing).
LEAKS = re.compile(r"upload:\d|/me/library/\d|longeval\.pdf|Kalpesh|Bransom|Dasigi|annotat|zebrafish", re.I)


async def test_uploads_are_checked_indexed_private_and_deleted(instance):
    app = _app(instance, upload_max_mb=2, upload_quota_mb=3)
    anonymous, jo, kim = client_for(app), client_for(app, "jo"), client_for(app, "kim")
    assert (await anonymous.post("/api/library", files=_file())).status_code == 401
    assert (await jo.post("/api/library", files=_file(), headers={"Origin": "https://evil.example"})).status_code == 403
    not_pdf = await jo.post("/api/library", files=_file(b"<html>hello</html>", "x.pdf"))
    assert not_pdf.status_code == 415 and "%PDF-" in not_pdf.json()["detail"]
    too_big = await jo.post("/api/library", files=_file(b"%PDF-1.7\n" + b"0" * (2 * 1024 * 1024 + 200_000)))
    assert too_big.status_code == 413 and "limit of 2 MB" in too_big.json()["detail"]
    assert (await jo.get("/api/library")).json() == []
    assert [p.name for p in instance.uploads().folder.iterdir()] == []  # nothing spooled is left behind

    added = await jo.post("/api/library", files=_file())
    assert added.status_code == 201 and added.headers["cache-control"] == "private, no-store"
    item = added.json()
    assert item["state"] == "queued" and item["size"] == len(LONGEVAL) and item["url"] == f"/me/library/{item['id']}"
    job = JobQueue(instance.catalog().engine).get(item["job"])
    assert job.kind == JobKind.UPLOAD and job.asked_by == "jo"
    _run_jobs(instance, Replay())
    item = (await jo.get(f"/api/library/{item['id']}")).json()
    assert item["state"] == "indexed" and item["title"] == TITLE and item["pages"] == 20
    assert "Kyle Lo" in item["authors"]

    found = (await jo.get("/api/passages", params={"q": PHRASE})).json()["hits"]
    assert found[0]["id"] == f"upload:{item['id']}" and found[0]["url"] == item["url"] and found[0]["page"]
    scoped = (await jo.get("/api/passages", params={"q": "annotators", "paper": f"upload:{item['id']}"})).json()
    assert scoped["hits"] and {h["id"] for h in scoped["hits"]} == {f"upload:{item['id']}"}
    assert (await jo.get("/api/search", params={"q": "LongEval"})).json()["hits"][0]["url"] == item["url"]
    page = await jo.get(item["url"])
    assert page.status_code == 200 and TITLE in page.text and "Kalpesh Krishna" in page.text
    assert page.headers["cache-control"] == "private, no-store"
    assert TITLE in (await jo.get("/me/library")).text

    fixed = await jo.patch(f"/api/library/{item['id']}", json={"title": "Zebrafish Faithfulness Guidelines",
                                                                 "authors": ["K. Krishna", "K. Lo"]})  # fmt: skip
    assert fixed.status_code == 200 and fixed.json()["state"] == "queued"
    assert (await jo.patch(f"/api/library/{item['id']}", json={"title": ""})).status_code == 422
    assert (await kim.patch(f"/api/library/{item['id']}", json={"title": "mine now"})).status_code == 404
    _run_jobs(instance, Replay())  # indexed again, keeping the corrections (not what the file says)
    fixed = (await jo.get(f"/api/library/{item['id']}")).json()
    assert (fixed["title"], fixed["authors"], fixed["state"]) == ("Zebrafish Faithfulness Guidelines",
                                                                  ["K. Krishna", "K. Lo"], "indexed")  # fmt: skip
    assert (await jo.get("/api/search", params={"q": "zebrafish"})).json()["hits"][0]["url"] == item["url"]
    for path in ("/api/search", "/api/passages"):  # its owner's searches read "KK" as the upload spells it
        read = (await jo.get(path, params={"q": "KK Allen"})).json()
        assert read["note"] == 'Read "KK" as "Kalpesh Krishna", as papers in this archive spell it out.', path

    missing = await jo.get("/api/library/999999")
    for client in (kim, anonymous):  # another user's item is the same 404 as one that does not exist
        leaked = await _everything_public(client, item["id"])
        assert not LEAKS.search(leaked), LEAKS.search(leaked)
    assert (await kim.get(f"/api/library/{item['id']}")).json() == missing.json()
    assert (await kim.delete(f"/api/library/{item['id']}")).status_code == 404

    # With personal API tokens (no cookie): jo's reaches jo's upload, kim's does not, anywhere.
    engine = instance.catalog().engine
    jo_script, kim_script = (bearer(app, create_token(engine, who, "script")[1], "192.0.2.9") for who in ("jo", "kim"))
    assert (await jo_script.get(f"/api/library/{item['id']}")).json()["title"] == fixed["title"]
    assert (await jo_script.get("/api/search", params={"q": "zebrafish"})).json()["hits"][0]["url"] == item["url"]
    assert (await kim_script.get(f"/api/library/{item['id']}")).json() == missing.json()
    assert (await kim_script.get("/api/library")).json() == []
    leaked = await _everything_public(kim_script, item["id"])
    assert not LEAKS.search(leaked), LEAKS.search(leaked)

    form = await jo.post("/api/library", files=_file(name="again.pdf"), headers={"Accept": "text/html", **SAME_SITE})
    assert form.status_code == 303 and form.headers["location"].startswith("/me/library/")
    full = await jo.post("/api/library", files=_file())  # 2 x 1.2 MB stored, 3 MB allowed
    assert full.status_code == 413 and "library is full" in full.json()["detail"]

    paper_id = f"upload:{item['id']}"
    assert instance.index().count(Filters(paper_ids=(paper_id,), viewer=ANYONE)) > 20
    assert (await jo.delete(f"/api/library/{item['id']}")).status_code == 204
    assert (await jo.get(f"/api/library/{item['id']}")).status_code == 404
    assert instance.index().count(Filters(paper_ids=(paper_id,), viewer=ANYONE)) == 0
    assert not (instance.uploads().folder / f"{item['id']}.pdf").exists()
    left = (await jo.get("/api/library")).json()
    assert [u["filename"] for u in left] == ["again.pdf"]
    gone = await jo.post(f"/me/library/{left[0]['id']}/delete", headers=SAME_SITE)
    assert gone.status_code == 303 and (await jo.get("/api/library")).json() == []
    assert instance.index().count(Filters(viewer=ANYONE)) == instance.index().count(Filters())
    assert [p.name for p in instance.uploads().folder.iterdir()] == []


@pytest.fixture
def instance(empty_instance):
    return empty_instance


async def test_a_reading_list_joins_the_library(archive):
    from tests.ingest.ondemand_fixtures import ASKED
    from tests.retrieval.test_reading_lists import BIBTEX, GRAPH, RIS, SPECTER

    app = _app(archive)
    jo, kim, anonymous = client_for(app, "jo"), client_for(app, "kim"), client_for(app)
    bib = {"file": ("my.bib", BIBTEX.encode(), "application/x-bibtex")}
    assert (await anonymous.post("/api/library/import", files=bib)).status_code == 401
    foreign = await jo.post("/api/library/import", files=bib, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    report = (await jo.post("/api/library/import", files=bib)).json()
    assert report["format"] == "BibTeX"
    assert report["counts"] == {"joined": 2, "requested": 1, "not_found": 1, "rejected": 1}
    assert report["requested"] == [{"entry": "fetchme", "detail": ASKED}]
    ris = {"file": ("my.ris", RIS.encode(), "application/x-research-info-systems")}
    page = await jo.post("/api/library/import", files=ris, headers={"Accept": "text/html", **SAME_SITE})
    assert page.status_code == 200 and "A RIS file: joined 2, requested 0, not found 1, rejected 1" in page.text
    assert "an entry without its TY (type) line" in page.text

    listed = (await jo.get("/api/library/papers")).json()
    assert [(p["id"], p["here"]) for p in listed] == [(ASKED, False), (GRAPH, True), (SPECTER, True)]
    assert (await kim.get("/api/library/papers")).json() == []
    _arrives(archive, ASKED)  # the requested paper arrives and is in the library
    assert (await jo.get("/api/library/papers")).json()[0] == {"id": ASKED, "title": "Asked For", "here": True}
    shown = await jo.get("/me/library")
    assert "Construction of the Literature Graph in Semantic Scholar" in shown.text
    assert (await kim.delete(f"/api/library/papers/{GRAPH}")).status_code == 404
    assert (await jo.delete(f"/api/library/papers/{GRAPH}")).status_code == 204
    assert [p["id"] for p in (await jo.get("/api/library/papers")).json()] == [ASKED, SPECTER]
    too_big = await jo.post("/api/library/import", files={"file": ("x.txt", b"2004.07180\n" * 300_000, "text/plain")})
    assert too_big.status_code == 413


@pytest.fixture
def archive(empty_instance):
    return with_two_papers(empty_instance)


async def test_an_upload_naming_an_arxiv_paper_that_is_not_here_offers_to_fetch_it(instance):
    from tests.ingest.ondemand_fixtures import ASKED

    app = _app(instance)
    jo = client_for(app, "jo")
    spooled = instance.uploads().folder / ".incoming-x.pdf"
    spooled.write_bytes(LONGEVAL)
    upload = instance.uploads().add("jo", "preprint.pdf", spooled, len(LONGEVAL), "0" * 64)
    instance.uploads().move(upload.id, UploadState.INDEXED, arxiv_id=ASKED)  # as if the file printed arXiv:<ASKED>
    page = await jo.get(upload.path)
    assert f"names arXiv {ASKED}, which is not in this archive" in page.text
    assert 'action="/papers/request"' in page.text and f'value="{ASKED}"' in page.text
    asked = await jo.post("/papers/request", data={"id": ASKED}, headers=SAME_SITE)
    assert asked.status_code == 303
    _arrives(instance, ASKED)
    page = await jo.get(upload.path)
    assert f'href="/papers/{ASKED}"' in page.text and "is the archive's paper" in page.text
    assert (await jo.get(f"/api/library/{upload.id}")).json()["paper_id"] == ASKED


def _arrives(instance, arxiv_id: str) -> None:
    """The paper a request asked for, stored as its `paper` job stores it (the job itself, fetching from recorded
    answers: `tests/web/test_paper_requests.py`)."""
    from ingest.pipeline import load_records
    from ingest.report import Summary
    from tests.retrieval.test_reading_lists import _record

    load_records(instance.catalog(), "test", [_record(arxiv_id, "Asked For")], Summary())


class LoopWatch:
    """The event loop's longest stall while it runs: a task that wakes every 5 ms and notes how late it woke."""

    def __init__(self) -> None:
        self.worst = 0.0

    async def __aenter__(self):
        import asyncio

        async def watch():
            loop = asyncio.get_running_loop()
            while True:
                before = loop.time()
                await asyncio.sleep(0.005)
                self.worst = max(self.worst, loop.time() - before - 0.005)

        self._task = asyncio.ensure_future(watch())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc):
        self._task.cancel()


async def test_an_import_made_to_be_slow_never_stalls_the_server(archive):
    """Entries whose fields are long runs of letters (an unbounded id pattern once cost seconds per field, in the
    event loop: every other request waited) are read in a child process, with patterns of linear cost; the loop
    goes on answering (its longest stall is a small part of the import's time); nothing of it is joined."""
    import time

    long_field = "a" * 15_000
    crafted = "".join(f"@misc{{k{i}, url = {{{long_field}}}, journal = {{{long_field}}}, note = {{{long_field}}}}}\n"
                      for i in range(2))  # fmt: skip
    jo = client_for(_app(archive), "jo")
    stalls = []
    for _ in range(3):  # a busy machine can stall any loop once; work done in the loop stalls it every time
        async with LoopWatch() as watch:
            started = time.monotonic()
            answer = await jo.post("/api/library/import",
                                   files={"file": ("crafted.bib", crafted.encode(), "text/plain")})  # fmt: skip
            took = time.monotonic() - started
        assert answer.status_code == 200
        assert answer.json()["counts"] == {"joined": 0, "requested": 0, "not_found": 0, "rejected": 2}
        stalls.append((watch.worst, took))
        if watch.worst < took / 4:
            break
    worst, took = stalls[-1]
    assert worst < took / 4, f"the loop stalled {worst:.2f} s of the import's {took:.2f} s (each try: {stalls})"


async def test_a_list_too_deep_or_too_slow_to_read_is_refused_with_its_reason(archive, monkeypatch):
    jo = client_for(_app(archive), "jo")
    deep = await jo.post("/api/library/import", files={"file": ("x.json", b"[" * 200_000, "application/json")})
    assert deep.status_code == 400 and "nested too deeply" in deep.json()["detail"]
    import retrieval.library.reading_lists

    monkeypatch.setattr(retrieval.library.reading_lists, "READ_SECONDS", 0.05)  # no real list takes this little
    many = "".join(f"@misc{{k{i}, title = {{Title {i}}}, eprint = {{2004.{i:05d}}}}}\n" for i in range(1500))
    slow = await jo.post("/api/library/import", files={"file": ("many.bib", many.encode(), "text/plain")})
    assert slow.status_code == 400 and "took longer than 0.05 s" in slow.json()["detail"]


async def test_a_users_writes_to_the_library_have_a_rate(archive):
    """Thirty writes a minute (uploads, imports, corrections, removals, papers asked for); the next is a 429 with
    Retry-After, and another user is not held back by it."""
    app = _app(archive)
    jo, kim = client_for(app, "jo"), client_for(app, "kim")
    for n in range(30):
        assert (await jo.delete(f"/api/library/papers/2004.{n:05d}")).status_code == 404
    held = await jo.post("/api/library/import", files={"file": ("ids.txt", b"2004.07180\n", "text/plain")})
    assert held.status_code == 429 and int(held.headers["retry-after"]) >= 1
    asked = await jo.post("/papers/request", data={"id": "2512.00001"}, headers=SAME_SITE)
    assert asked.status_code == 429
    assert (await kim.post("/api/library/import", files={"file": ("ids.txt", b"2004.07180\n", "text/plain")})).json()[
        "counts"]["joined"] == 1  # fmt: skip
