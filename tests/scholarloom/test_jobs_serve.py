"""`scholarloom ingest` while `scholarloom serve` holds the embedded index: the job runs in the server while users
keep chatting, the terminal follows it (a server killed mid-job: `test_jobs_restart.py`)."""

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx

from harness.serve import child_environment
from ingest.demo import DEMO_DIR
from jobs.queue import JobQueue, JobState
from retrieval.scholarly.citation_edges import ListedWork, add_citation
from tests.chat_server import PASSWORD, ChatClient
from tests.small_archive import small_archive

SPECTER = "2004.07180"
SCHOLARLOOM = str(Path(sys.executable).with_name("scholarloom"))


def _archive(tmp_path: Path, make_instance) -> Path:
    return small_archive(tmp_path, make_instance, {"alice": PASSWORD})


def _queue(make_instance, tmp_path: Path, data: Path) -> JobQueue:
    """The served instance's job queue, read from this process."""
    reader = make_instance(tmp_path / "reader", database_url=f"sqlite:///{data / 'scholarloom.db'}")
    return JobQueue(reader.catalog().engine)


async def _keep_asking(base: str, stop: asyncio.Event) -> list[str]:
    """Ask again and again, a fifth of a second apart, until told to stop; returns each answer (a turn that never
    ends fails the test)."""
    chat = ChatClient(base, "alice")
    await chat.connect()
    answers = []
    try:
        while not stop.is_set():
            await chat.ask("document-level representation learning from the citation graph")
            answers.append(chat.messages("assistant_message")[-1]["output"])
            await asyncio.sleep(0.2)
    finally:
        await chat.sio.disconnect()
    return answers


def test_an_ingest_run_is_handed_to_the_server_while_users_chat(small_server):
    base, data = small_server.base, small_server.data
    before = httpx.get(f"{base}/api/passages", params={"q": "citation-informed transformers"}).json()
    assert not [hit for hit in before["hits"] if hit["id"] == SPECTER]

    async def scenario():
        stop = asyncio.Event()
        asking = asyncio.create_task(_keep_asking(base, stop))
        await asyncio.sleep(1)
        ingest = await asyncio.create_subprocess_exec(
            SCHOLARLOOM, "ingest", "pdfs", str(DEMO_DIR / "pdfs" / f"{SPECTER}.pdf"), env=child_environment(data),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        output = (await ingest.communicate())[0].decode()
        stop.set()
        return ingest.returncode, output, await asking

    code, output, answers = asyncio.run(scenario())
    assert code == 0, output
    assert "runs there as job" in output and "PDFs: added 1," in output and "passages " in output
    assert len(answers) >= 2 and all("unavailable" not in a.lower() for a in answers)
    found = httpx.get(f"{base}/api/passages", params={"q": "citation-informed transformers"}).json()["hits"]
    assert found and found[0]["id"] == SPECTER and found[0]["page"] >= 1  # no restart needed
    listed = subprocess.run([SCHOLARLOOM, "jobs", "list"], env=child_environment(data), capture_output=True, text=True)
    assert "done" in listed.stdout and "pdfs" in listed.stdout and "by cli" in listed.stdout, listed.stdout

    async def ask_again():
        chat = ChatClient(base, "alice")
        await chat.connect()
        await chat.ask("How does SPECTER use the citation graph?")
        await chat.sio.disconnect()
        return chat.messages("assistant_message")[-1]["output"]

    answer = asyncio.run(ask_again())
    assert f"/papers/{SPECTER}" in answer and "p. " in answer  # a page of the new full text, cited
    assert "warning: demo mode" in small_server.process.output()  # `served` runs the demo mode: it says so


def test_the_chat_offers_a_paper_that_is_not_here_and_answers_from_it_once_fetched(small_server, make_instance,
                                                                                  tmp_path):  # fmt: skip
    from tests.ingest.ondemand_fixtures import ASKED

    base, data = small_server.base, small_server.data

    async def scenario():
        chat = ChatClient(base, "alice")
        await chat.connect()
        await chat.ask(f"What is https://arxiv.org/abs/{ASKED}v1 about?")
        for _ in range(100):
            offers = [m for m in chat.messages("assistant_message") if "not in this archive yet" in m["output"]]
            if offers:
                break
            await asyncio.sleep(0.05)
        assert offers and offers[0]["output"].startswith(ASKED), chat.messages("assistant_message")
        async with chat.http() as http:
            pressed = await http.post("/chat/project/action", timeout=120, json={
                "sessionId": chat.session_id,
                "action": {"name": "fetch_from_arxiv", "payload": {"arxiv_id": ASKED}},
            })  # fmt: skip
        assert pressed.status_code == 200
        for _ in range(600):  # the HTTP answer can overtake the socket events it caused
            outputs = [m["output"] for m in chat.messages("assistant_message")]
            fetched = [o for o in outputs if "Fetched **[" in o]
            if fetched or any("could not be fetched" in o for o in outputs):
                break
            await asyncio.sleep(0.05)
        assert fetched, outputs
        await chat.ask("What is this paper about?")
        answer = chat.messages("assistant_message")[-1]["output"]
        await chat.sio.disconnect()
        return fetched, answer

    fetched, answer = asyncio.run(scenario())
    assert fetched and f"(/papers/{ASKED}" in fetched[0]
    assert f"/papers/{ASKED}" in answer  # the conversation now answers from the new paper
    page = httpx.get(f"{base}/papers/{ASKED}", follow_redirects=True)
    assert page.status_code == 200
    jobs = _queue(make_instance, tmp_path, data).recent()
    (job,) = [j for j in jobs if j.kind == "paper" and j.arguments == {"arxiv_id": ASKED}]
    assert job.asked_by == "alice" and job.state == JobState.DONE and job.counts["passages"] > 10


def test_a_cards_references_offer_to_fetch_those_not_held_and_the_chat_follows_the_job(small_server, make_instance,
                                                                                      tmp_path):  # fmt: skip
    """Issue 40: under a card's References, the chat offers the references with an arXiv id that are not here (a
    button our code puts there, never the model); pressed, one job fetches them and the message links each."""
    from tests.ingest.ondemand_fixtures import THIRD_ASKED

    base, data = small_server.base, small_server.data
    trippy = "2005.02877"  # held (its record), its PDF not read here: the list is written as the PDF step would
    writer = make_instance(tmp_path / "writer", database_url=f"sqlite:///{data / 'scholarloom.db'}")
    with writer.catalog().session() as session:
        add_citation(session, trippy, arxiv_id=THIRD_ASKED, title="A paper arXiv has", entry=ListedWork(
            ["A. Author"], 2025, None, "A. Author. A paper arXiv has. arXiv:2512.13687, 2025."))  # fmt: skip
        add_citation(session, trippy, arxiv_id="1810.04805", title="BERT")  # not here, and the recorded arXiv lacks it
        session.commit()

    async def scenario():
        chat = ChatClient(base, "dave")
        await chat.connect()
        async with chat.http() as http:
            shown = await http.post("/chat/project/action", timeout=120, json={
                "sessionId": chat.session_id,
                "action": {"name": "show_references", "payload": {"id": trippy, "title": "TripPy"}},
            })  # fmt: skip
        assert shown.status_code == 200
        offer = None
        for _ in range(200):
            offers = [m for m in chat.messages("assistant_message") if "not in this archive yet" in m["output"]]
            if offers:
                offer = offers[-1]
                break
            await asyncio.sleep(0.05)
        assert offer and offer["output"].startswith("2 of the references of TripPy have an arXiv id"), \
            chat.messages("assistant_message")  # fmt: skip
        async with chat.http() as http:
            pressed = await http.post("/chat/project/action", timeout=120, json={
                "sessionId": chat.session_id,
                "action": {"name": "fetch_references", "payload": {"paper_id": trippy}},
            })  # fmt: skip
        assert pressed.status_code == 200
        for _ in range(1200):
            outputs = [m["output"] for m in chat.messages("assistant_message")]
            done = [o for o in outputs if o.startswith("Fetched ")]
            if done:
                break
            await asyncio.sleep(0.05)
        await chat.sio.disconnect()
        return done

    done = asyncio.run(scenario())
    assert done and done[-1].startswith("Fetched 1 of 2 references:") and f"(/papers/{THIRD_ASKED}-" in done[-1]
    assert "- Not fetched: 1810.04805 (arXiv has no paper 1810.04805)" in done[-1]
    (job,) = [j for j in _queue(make_instance, tmp_path, data).recent() if j.kind == "references"]
    assert (job.asked_by, job.state, job.arguments["arxiv_ids"]) == ("dave", JobState.DONE, [THIRD_ASKED, "1810.04805"])
