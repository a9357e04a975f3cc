"""`scholarloom ingest` while `scholarloom serve` holds the embedded index: the job runs in the server while users
keep chatting, the terminal follows it, and a server killed in the middle of a job finishes it after a restart."""

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from auth.accounts import add_user, create_tables
from ingest.demo import DEMO_DIR, load_demo
from retrieval.index import Filters
from retrieval.jobs import JobQueue, JobState
from tests.chat_server import PASSWORD, ChatClient
from tests.serve import free_port, served

SPECTER = "2004.07180"
SCHOLARLOOM = str(Path(sys.executable).with_name("scholarloom"))


def _archive(tmp_path: Path, make_instance) -> Path:
    """The seed paper and the six full-text papers' records, without their PDFs; one user."""
    root = tmp_path / "corpus"
    shutil.copytree(DEMO_DIR / "seed", root / "seed")
    (root / "pdfs").mkdir(parents=True)
    shutil.copy(DEMO_DIR / "pdfs" / "metadata.jsonl", root / "pdfs")
    data = tmp_path / "data"
    settings = make_instance(data)
    load_demo(settings.catalog(), settings.index(), settings.embedder(), root)
    create_tables(settings.catalog().engine)
    add_user(settings.catalog().engine, "alice", PASSWORD)
    settings.close()  # the server opens the index next
    return data


def _environment(data: Path) -> dict:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("SCHOLARLOOM_", "CHAINLIT_"))}
    return {**kept, "SCHOLARLOOM_DATA_DIR": str(data), "SCHOLARLOOM_SHARED_MODELS_DIR": os.environ[
        "SCHOLARLOOM_SHARED_MODELS_DIR"]}  # fmt: skip


async def _keep_asking(base: str, stop: asyncio.Event) -> list[str]:
    """Ask again and again until told to stop; returns each answer (a turn that never ends fails the test)."""
    chat = ChatClient(base, "alice")
    await chat.connect()
    answers = []
    try:
        while not stop.is_set():
            await chat.ask("document-level representation learning from the citation graph")
            answers.append(chat.messages("assistant_message")[-1]["output"])
    finally:
        await chat.sio.disconnect()
    return answers


def test_an_ingest_run_is_handed_to_the_server_while_users_chat(tmp_path, make_instance):
    data = _archive(tmp_path, make_instance)
    with served(data) as (base, _):
        before = httpx.get(f"{base}/api/passages", params={"q": "citation-informed transformers"}).json()
        assert before["hits"] == []

        async def scenario():
            stop = asyncio.Event()
            asking = asyncio.create_task(_keep_asking(base, stop))
            await asyncio.sleep(1)
            ingest = await asyncio.create_subprocess_exec(
                SCHOLARLOOM, "ingest", "pdfs", str(DEMO_DIR / "pdfs" / f"{SPECTER}.pdf"), env=_environment(data),
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
        listed = subprocess.run([SCHOLARLOOM, "jobs", "list"], env=_environment(data), capture_output=True, text=True)
        assert "done" in listed.stdout and "pdfs" in listed.stdout and "by cli" in listed.stdout

        async def ask_again():
            chat = ChatClient(base, "alice")
            await chat.connect()
            await chat.ask("How does SPECTER use the citation graph?")
            await chat.sio.disconnect()
            return chat.messages("assistant_message")[-1]["output"]

        answer = asyncio.run(ask_again())
        assert f"/papers/{SPECTER}" in answer and "p. " in answer  # a page of the new full text, cited


SMALL_PDFS = ("1805.02262", "2006.12719", "2005.07362")  # the three smallest of the demo's six


def test_a_server_killed_mid_job_finishes_it_after_a_restart(tmp_path, make_instance, demo):
    data = _archive(tmp_path, make_instance)
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for paper_id in SMALL_PDFS:
        shutil.copy(DEMO_DIR / "pdfs" / f"{paper_id}.pdf", folder)
    port = free_port()
    with served(data, port=port) as (_, process):
        handed = subprocess.run(
            [SCHOLARLOOM, "ingest", "pdfs", str(folder), "--detach"], env=_environment(data), capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
        assert handed.returncode == 0 and "runs there as job" in handed.stdout, handed.stdout + handed.stderr
        queue = JobQueue(make_instance(tmp_path / "reader", database_url=f"sqlite:///{data / 'scholarloom.db'}")
                         .catalog().engine)  # fmt: skip
        (job,) = queue.recent()
        deadline = time.monotonic() + 120
        while (queue.get(job.id).progress or [{"completed": 0}])[0]["completed"] < 2:  # one PDF done, one started
            assert time.monotonic() < deadline and JobState(queue.get(job.id).state).live
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    assert queue.get(job.id).state == JobState.RUNNING  # as the dead server left it
    with served(data, port=port):
        deadline = time.monotonic() + 180
        while JobState(queue.get(job.id).state).live:
            assert time.monotonic() < deadline, queue.get(job.id).progress
            time.sleep(0.2)
    done = queue.get(job.id)
    assert done.state == JobState.DONE and done.attempts == 2, done.error
    assert done.counts["unchanged"] >= 1 and done.counts["unchanged"] + done.counts["added"] == 3
    settings = make_instance(data)
    passages = settings.index().count(Filters(kinds=("passage",)))
    with settings.catalog().session() as session:
        from sqlmodel import func, select

        from retrieval.models import LedgerEntry

        done_files = session.exec(
            select(func.count()).select_from(LedgerEntry).where(LedgerEntry.stage == "fulltext")
        ).one()
    # The same passages as the demo's one uninterrupted load of these PDFs: nothing lost, nothing twice.
    expected = demo.index().count(Filters(kinds=("passage",), paper_ids=SMALL_PDFS))
    assert done_files == 3 and passages == expected > 0
