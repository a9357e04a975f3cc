"""A paper that is not here, fetched on request from the web: the 404 page's button, a shared job for the same
paper, a page that follows the job and then opens the paper; an unknown id, the daily quota and the switch."""

from __future__ import annotations

import time

import pytest
from bs4 import BeautifulSoup
from pydantic import SecretStr

from auth.accounts import add_user
from jobs.registry import bound_kinds
from jobs.queue import JobQueue, JobState
from jobs.runner import JobRunner
from tests.ingest.ondemand_fixtures import ALSO_ASKED, ASKED, recorded_routes
from tests.ingest.test_http import make_client
from tests.replay import Replay
from tests.web.test_follow import SECRET, client_for

ORIGIN = {"Origin": "http://test"}


def _app(settings, **fields):
    from scholarloom.app import create_app

    settings.auth_secret = SecretStr(SECRET)
    for name, value in fields.items():
        setattr(settings, name, value)
    for user in ("jo", "kim"):
        add_user(settings.catalog().engine, user, "a long enough password", replace=True)
    return create_app(settings, with_chat=False)


def _run_jobs(settings, replay, client=make_client, follow_ups=None, seconds: float = 60) -> list:
    """The server's job worker, fetching through the recorded answers (with `client(replay)`), until no job is
    left; `follow_ups` as `serve` gives them (`jobs.watches.FOLLOW_UPS`). The jobs, newest first."""
    queue = JobQueue(settings.catalog().engine)
    context = settings.job_context(clients=lambda: client(replay))
    runner = JobRunner(queue, bound_kinds(context), poll=0.05, follow_ups=follow_ups)
    runner.start()
    try:
        deadline = time.monotonic() + seconds
        while any(JobState(j.state).live for j in queue.recent()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        runner.close()
    return queue.recent()


@pytest.fixture
def instance(empty_instance):
    return empty_instance


async def test_the_404_button_fetches_the_paper_and_lands_on_its_page(instance):
    app = _app(instance)
    anonymous = await client_for(app).get(f"/papers/{ASKED}")
    assert anonymous.status_code == 404 and "Sign in</a> to fetch it" in anonymous.text
    jo, kim = client_for(app, "jo"), client_for(app, "kim")
    missing = await jo.get(f"/papers/{ASKED}v1")
    form = BeautifulSoup(missing.text, "html.parser").select_one("section.fetch-offer form")
    assert missing.status_code == 404 and form["action"] == "/papers/request" and form["method"] == "post"
    assert form.select_one("input[name=id]")["value"] == ASKED

    asked = await jo.post("/papers/request", data={"id": f"https://arxiv.org/abs/{ASKED}v1"}, headers=ORIGIN)
    assert asked.status_code == 303 and asked.headers["location"].startswith("/papers/requests/")
    again = await kim.post("/papers/request", data={"id": f"10.48550/arXiv.{ASKED}"}, headers=ORIGIN)
    job_path = asked.headers["location"].split("?")[0]
    assert again.headers["location"].split("?")[0] == job_path  # one job for the same paper
    following = await jo.get(asked.headers["location"])
    assert following.status_code == 200 and '<meta http-equiv="refresh" content="2">' in following.text
    assert f"Fetching {ASKED} from arXiv" in following.text and "no-store" in following.headers["cache-control"]
    assert (await kim.get(again.headers["location"])).status_code == 200  # she joined it: she follows it too
    # Nobody else reads what others asked for by counting job numbers: not signed out, not another user, not with
    # the address made for someone else (once anyone could list every request, its state and its raw error).
    eve = client_for(app, "eve")
    for who, path in ((client_for(app), asked.headers["location"]), (eve, job_path), (eve, asked.headers["location"]),
                      (kim, asked.headers["location"])):  # fmt: skip
        refused = await who.get(path)
        assert refused.status_code == 404 and ASKED not in refused.text, path
    assert (await jo.get(job_path)).status_code == 200  # the one who asked needs no signature

    _run_jobs(instance, recorded_routes(Replay()))
    done = await jo.get(asked.headers["location"])
    assert done.status_code == 303 and done.headers["location"].startswith(f"/papers/{ASKED}")
    page = await jo.get(done.headers["location"])
    assert page.status_code == 200 and "<h1" in page.text
    (job,) = JobQueue(instance.catalog().engine).recent()
    assert job.asked_by == "jo" and job.state == JobState.DONE and job.counts["passages"] > 10
    searched = await jo.get("/search", params={"q": f"arXiv:{ASKED}"})
    assert searched.status_code == 303 and searched.headers["location"].startswith(f"/papers/{ASKED}")


async def test_an_unknown_id_fails_with_a_message_and_the_search_page_offers_a_fetch(instance):
    app = _app(instance)
    jo = client_for(app, "jo")
    offer = await jo.get("/search", params={"q": "2512.99999"})
    assert offer.status_code == 200 and 'value="2512.99999"' in offer.text
    asked = await jo.post("/papers/request", data={"id": "2512.99999"}, headers=ORIGIN)
    _run_jobs(instance, recorded_routes(Replay()))
    ended = await jo.get(asked.headers["location"])
    assert ended.status_code == 200 and "arXiv has no paper 2512.99999" in ended.text and "refresh" not in ended.text
    assert instance.catalog().counts()["papers"] == 0


async def test_quota_switch_and_forms_from_elsewhere(instance):
    app = _app(instance, on_demand_daily=2)
    jo = client_for(app, "jo")
    for n in (1, 2):
        assert (await jo.post("/papers/request", data={"id": f"2512.0000{n}"}, headers=ORIGIN)).status_code == 303
    third = await jo.post("/papers/request", data={"id": "2512.00003"}, headers=ORIGIN)
    assert third.status_code == 403 and "2 papers in the last day" in third.text
    shared = await jo.post("/papers/request", data={"id": "2512.00001"}, headers=ORIGIN)
    assert shared.status_code == 303  # joining a job already running costs nothing
    foreign = await jo.post("/papers/request", data={"id": "2512.00004"}, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    nonsense = await jo.post("/papers/request", data={"id": "graph neural networks"}, headers=ORIGIN)
    assert nonsense.status_code == 400 and "not an arXiv id" in nonsense.text
    anonymous = await client_for(app).post("/papers/request", data={"id": "2512.00005"}, headers=ORIGIN)
    assert anonymous.status_code == 403 and "Sign in" in anonymous.text
    off = _app(instance, on_demand="off")
    refused = await client_for(off, "kim").post("/papers/request", data={"id": "2512.00006"}, headers=ORIGIN)
    assert refused.status_code == 403 and "switched off" in refused.text
    assert "fetch-offer" not in (await client_for(off, "kim").get("/papers/2512.00006")).text
    assert len(JobQueue(instance.catalog().engine).recent()) == 2


CITING = "2301.01234"
NOT_ON_ARXIV = "2512.99999"


async def _page(client, paper_id: str) -> BeautifulSoup:
    return BeautifulSoup((await client.get(f"/papers/{paper_id}", follow_redirects=True)).text, "html.parser")


def _citing_paper(settings) -> None:
    """A held paper whose list names three arXiv papers this archive does not hold (one that arXiv lacks too)."""
    from ingest.pipeline import load_records
    from ingest.report import Summary
    from retrieval.scholarly.records import AuthorRecord, PaperRecord, ReferenceRecord

    listed = [ReferenceRecord(arxiv_id=i) for i in (ASKED, ALSO_ASKED, NOT_ON_ARXIV)]
    record = PaperRecord(id=CITING, arxiv_id=CITING, title="A survey that cites what is not here yet", year=2026,
                         authors=[AuthorRecord(name="Ada Lovelace")], source="arxiv_api",
                         references=listed)  # fmt: skip
    load_records(settings.catalog(), "arxiv_api", [record], Summary())


async def test_a_papers_missing_references_are_fetched_by_one_job_and_cite_back(instance, tmp_path):
    from tests.conftest import first_pages
    from tests.ingest.ondemand_fixtures import STAND_IN_PDF

    _citing_paper(instance)
    app = _app(instance)
    anonymous = await client_for(app).get(f"/papers/{CITING}", follow_redirects=True)
    offer = BeautifulSoup(anonymous.text, "html.parser").select_one("#references .fetch-refs")
    assert "3 references with an arXiv id are not held here" in offer.text and offer.select_one("a[href='/chat/login']")
    assert offer.select_one("form") is None
    refused = await client_for(app).post(f"/papers/{CITING}/references/fetch", headers=ORIGIN)
    assert refused.status_code == 403 and "Sign in" in refused.text

    jo, kim = client_for(app, "jo"), client_for(app, "kim")
    form = (await _page(jo, CITING)).select_one("#references form")
    assert form["action"] == f"/papers/{CITING}/references/fetch"
    assert form.button.text == "Fetch the 3 references not held"
    asked = await jo.post(form["action"], headers=ORIGIN)
    assert asked.status_code == 303 and asked.headers["location"].startswith("/papers/requests/")
    joined = await kim.post(form["action"], headers=ORIGIN)
    assert joined.headers["location"].split("?")[0] == asked.headers["location"].split("?")[0]  # one job, shared
    following = await jo.get(asked.headers["location"])
    assert following.status_code == 200 and f"Fetching 3 references of {CITING} from arXiv" in following.text
    assert (await client_for(app, "eve").get(asked.headers["location"].split("?")[0])).status_code == 404

    _run_jobs(instance, recorded_routes(Replay(), ASKED, ALSO_ASKED, pdf=first_pages(STAND_IN_PDF, 2, tmp_path)))
    ended = await jo.get(asked.headers["location"])  # one failed: the page stays, saying which and why
    assert ended.status_code == 200 and f"{NOT_ON_ARXIV}: arXiv has no paper {NOT_ON_ARXIV}." in ended.text
    (job,) = JobQueue(instance.catalog().engine).recent()
    assert (job.kind, job.state, job.asked_by) == ("references", JobState.DONE, "jo")
    assert job.note == f"references of {CITING}: 2 of 3 papers fetched"

    page = await _page(jo, CITING)
    linked = [a["href"] for a in page.select("#references ol.refs a")]
    assert [href.split("-")[0] for href in linked] == [f"/papers/{i}" for i in (ASKED, ALSO_ASKED, NOT_ON_ARXIV)]
    assert linked[0] != f"/papers/{ASKED}"  # the fetched papers' own pages (with their titles), not the fetch offer
    assert page.select_one("#references form button").text == "Fetch the 1 reference not held"
    cited = await _page(jo, ASKED)  # and the fetched paper's page shows who cites it
    assert any(a["href"].startswith(f"/papers/{CITING}-") for a in cited.select("a"))
    assert "Cited by (1 in this archive)" in cited.text


async def test_fetching_references_keeps_to_the_daily_share_and_each_paper_once(instance):
    _citing_paper(instance)
    app = _app(instance, on_demand_daily=2)
    jo = client_for(app, "jo")
    assert (await jo.post("/papers/request", data={"id": ASKED}, headers=ORIGIN)).status_code == 303
    asked = await jo.post(f"/papers/{CITING}/references/fetch", headers=ORIGIN)
    assert asked.status_code == 303
    jobs = {j.kind: j for j in JobQueue(instance.catalog().engine).recent()}
    # ASKED is being fetched already (not asked twice); the share had one paper left: the next of the list
    assert jobs["references"].arguments["arxiv_ids"] == [ALSO_ASKED]
    # the share is spent: neither a paper alone nor another paper's references may be asked for today
    third = await jo.post("/papers/request", data={"id": ALSO_ASKED}, headers=ORIGIN)
    assert third.status_code == 403 and "2 papers in the last day" in third.text
    kim = client_for(app, "kim")
    again = await kim.post(f"/papers/{CITING}/references/fetch", headers=ORIGIN)  # joins jo's job: costs nothing
    assert again.status_code == 303 and len(JobQueue(instance.catalog().engine).recent()) == 2
    foreign = await kim.post(f"/papers/{CITING}/references/fetch", headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    unknown = await kim.post("/papers/2301.99999/references/fetch", headers=ORIGIN)
    assert unknown.status_code == 404
