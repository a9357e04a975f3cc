"""`scholarloom backup` while `scholarloom serve` holds the embedded index, a user chats and an ingest job runs;
`scholarloom restore` into a fresh directory; a server on the restored directory finds the same papers and resumes
the same thread, and the counts of every table, index point and file are the archive's."""

import asyncio
import json
import subprocess
import tarfile
import time

import httpx

from harness.serve import child_environment, served
from ingest.demo import DEMO_DIR
from jobs.arguments import JobKind
from jobs.queue import JobQueue
from retrieval.upkeep.backup import read_manifest, table_counts
from retrieval.vectors.index import Filters
from retrieval.vectors.points import PASSAGE_KINDS
from retrieval.vectors.store import ANYONE
from scholarloom.settings import Settings
from tests.chat_server import ChatClient, sign_in
from tests.conftest import first_pages
from tests.scholarloom.test_jobs_serve import SCHOLARLOOM, _keep_asking
from tests.small_archive import new_user_on

ELMO = "1802.05365"
UPLOADED = DEMO_DIR / "pdfs" / "1805.02262.pdf"  # the smallest shipped PDF: any upload will do (its first two pages)
QUESTION = "deep contextualized word representations from a bidirectional language model"


async def _finished_thread(base: str) -> str:
    """A conversation of erin's that ends before the backup starts: its id."""
    chat = ChatClient(base, "erin")
    await chat.connect()
    await chat.ask("contextual word embeddings")
    await chat.sio.disconnect()
    deadline = time.monotonic() + 30
    async with chat.http() as http:  # Chainlit writes the thread after the turn, in the background
        while not (threads := (await http.post("/chat/project/threads", json={"pagination": {"first": 5},
                                                                              "filter": {}})).json()["data"]):
            assert time.monotonic() < deadline, "the conversation was never saved"
            await asyncio.sleep(0.2)
    return threads[0]["id"]


async def _upload(base: str, token: str, folder) -> None:
    async with httpx.AsyncClient(base_url=base, cookies={"access_token": token}, timeout=30) as http:
        pdf = {"file": ("graph.pdf", first_pages(UPLOADED, 2, folder).read_bytes(), "application/pdf")}
        added = await http.post("/api/library", files=pdf)
        assert added.status_code == 201, added.text


async def _resumed(base: str, thread_id: str) -> list[tuple]:
    """The steps a reopened thread sends the page: (type, output) of each."""
    chat = ChatClient(base, "erin")
    await chat.connect(thread_id=thread_id)
    resumed = await chat.wait_for("resume_thread", timeout=30)
    await chat.sio.disconnect()
    return [(step["type"], step["output"]) for step in resumed["steps"]]


async def _queued_after(data, before: int) -> None:
    """Until the server's queue holds a `pdfs` job newer than `before` (the ingest command has handed it over)."""
    settings = Settings(data_dir=data)
    queue, deadline = JobQueue(settings.catalog().engine), time.monotonic() + 60
    try:
        while (job := queue.last_of(JobKind.PDFS)) is None or job.id <= before:
            assert time.monotonic() < deadline, "the ingest command never queued its job"
            await asyncio.sleep(0.1)
    finally:
        settings.close()


def _last_pdfs_job(data) -> int:
    settings = Settings(data_dir=data)
    try:
        job = JobQueue(settings.catalog().engine).last_of(JobKind.PDFS)
        return job.id if job is not None else 0
    finally:
        settings.close()


def _run(*command: str, data) -> subprocess.CompletedProcess:
    environment = child_environment(data)
    return subprocess.run([SCHOLARLOOM, *command], env=environment, capture_output=True, text=True, timeout=300)


def test_a_backup_taken_while_users_chat_and_a_job_runs_restores_to_the_same_archive(small_server, tmp_path):
    base, data = small_server.base, small_server.data
    new_user_on(data, "erin")
    archive = tmp_path / "scholarloom-backup.tar"

    async def scenario():
        thread_id = await _finished_thread(base)
        await _upload(base, await sign_in(base, "erin"), tmp_path / "upload")
        stop = asyncio.Event()
        asking = asyncio.create_task(_keep_asking(base, stop))  # alice asks again and again meanwhile
        before = _last_pdfs_job(data)
        ingest = await asyncio.create_subprocess_exec(
            SCHOLARLOOM, "ingest", "pdfs", str(DEMO_DIR / "pdfs" / f"{ELMO}.pdf"), env=child_environment(data),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        await _queued_after(data, before)  # the ingest job is queued (or running) when the backup is asked for
        backup = await asyncio.create_subprocess_exec(
            SCHOLARLOOM, "backup", str(archive), env=child_environment(data),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        ingested, backed_up = await asyncio.gather(ingest.communicate(), backup.communicate())
        stop.set()
        outputs = (ingest.returncode, ingested[0].decode(), backup.returncode, backed_up[0].decode())
        return thread_id, outputs, await asking

    thread_id, (ingest_code, ingested, backup_code, backed_up), answers = asyncio.run(scenario())
    assert ingest_code == 0 and "PDFs: added 1," in ingested, ingested
    assert backup_code == 0 and "runs there as job" in backed_up and "backup: done" in backed_up, backed_up
    assert len(answers) >= 2 and all("unavailable" not in a.lower() for a in answers)  # no turn failed meanwhile
    manifest = read_manifest(archive)
    assert manifest["files"]["uploads"] >= 1 and manifest["database"]["counts"]["steps"] > 0
    assert manifest["index"]["kinds"]["passage"] > 0  # the uploads' and the ingested PDF's passages
    with tarfile.open(archive) as members:
        kept = json.loads(members.extractfile("settings.json").read())
    secret = (data / "demo-auth-secret").read_text().strip()  # the served instance signs sessions with it
    assert kept["data_dir"] == str(data) and "auth_secret" not in kept and secret not in json.dumps(kept)

    restored = tmp_path / "restored"
    done = _run("restore", str(archive), data=restored)
    assert done.returncode == 0 and "every count matches the archive's" in done.stdout, done.stdout + done.stderr
    again = _run("restore", str(archive), data=restored)
    assert again.returncode == 1 and "is not empty" in again.stderr

    settings = Settings(data_dir=restored)
    counts, index = table_counts(settings.catalog().engine), settings.index()
    assert counts == manifest["database"]["counts"] and index.count() == manifest["index"]["points"]
    passages = index.count(Filters(kinds=PASSAGE_KINDS, viewer=ANYONE))
    assert passages == sum(n for kind, n in manifest["index"]["kinds"].items() if kind in PASSAGE_KINDS)
    for name, folder in settings.backup_folders().items():
        assert sum(1 for p in folder.rglob("*") if p.is_file()) == manifest["files"][name]
    settings.close()

    with served(restored) as (restored_base, _process):
        # The same papers in the same order, the ingested full text, and the thread as it was.
        # (A server loads its encoder at its first search: on a busy machine that takes more than httpx's 5 s.)
        searches = (httpx.get(f"{b}/api/search", params={"q": QUESTION}, timeout=60) for b in (base, restored_base))
        first, second = (answer.json() for answer in searches)
        assert [h["id"] for h in first["hits"]] == [h["id"] for h in second["hits"]] and first["hits"]
        found = httpx.get(f"{restored_base}/api/passages", params={"q": QUESTION}, timeout=60).json()["hits"]
        assert found and found[0]["id"] == ELMO
        original, reopened = asyncio.run(_resumed(base, thread_id)), asyncio.run(_resumed(restored_base, thread_id))
        assert reopened == original and any(kind == "assistant_message" for kind, _ in original)

