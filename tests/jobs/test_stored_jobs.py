"""A database the previous version made (before the job registry, at 4aed77f) opens and resumes its jobs: their rows
hold the arguments as that version's commands, pages and uploads wrote them (JSON, nulls for what was not given),
one was left running by a server that died, its snapshot had been half read into the ledger; each runs through the
registry as `serve` runs it, and a command's run reads the same rows."""

from __future__ import annotations

import json
import time

from pydantic import SecretStr
from sqlalchemy import text
from sqlmodel import func, select

from ingest.demo import DEMO_DIR
from ingest.report import Summary
from ingest.snapshot import STAGE, import_snapshot
from jobs.arguments import JobKind, PdfsArguments, UpdateArguments, ZoteroArguments
from jobs.queue import JobQueue, JobState
from jobs.registry import REGISTRY, job_runner
from retrieval.library.watches import Watches
from retrieval.scholarly.models import LedgerEntry

SNAPSHOT = DEMO_DIR / "arxiv_metadata" / "arxiv-metadata-oai-snapshot.head200.jsonl"


def _old_rows(tmp_path, question_id: int) -> list[tuple[str, dict, str, str]]:
    """(kind, arguments, state, asked by) as 4aed77f queued them."""
    return [
        ("snapshot", {"path": str(SNAPSHOT), "categories": [], "since": None, "until": None, "limit": 5,
                      "index": True}, "running", "cli"),  # left running by a server that died  # fmt: skip
        ("upload", {"upload_id": 424242}, "queued", "jo"),  # its upload deleted while it waited
        ("zotero", {"library": 99, "owner": "jo", "on_demand": False, "daily": 20}, "queued", "jo"),  # disconnected
        ("watches", {"owner": "jo", "question": question_id}, "queued", "jo"),  # "Run now" on the page
        ("backup", {"destination": str(tmp_path / "before.tar")}, "queued", "cli"),
    ]


def _write_old_database(settings, tmp_path) -> list[int]:
    """The jobs and ledger of the previous version, written as rows (not through this version's queue)."""
    engine = settings.catalog().engine
    import_snapshot(settings.catalog(), SNAPSHOT, Summary(), None, limit=3)  # what the snapshot had read
    question = Watches(engine).save("jo", "neural networks", "all", [], None)
    ids = []
    with engine.begin() as connection:
        for kind, arguments, state, asked_by in _old_rows(tmp_path, question.id):
            found = connection.execute(
                text("INSERT INTO jobs (kind, arguments, state, asked_by, progress, counts, failures, attempts, "
                     "cancel_requested, created_at, worker) VALUES (:kind, :arguments, :state, :asked_by, '[]', '{}', "
                     "'[]', :attempts, 0, CURRENT_TIMESTAMP, :worker) RETURNING id"),
                {"kind": kind, "arguments": json.dumps(arguments), "state": state, "asked_by": asked_by,
                 "attempts": int(state == "running"), "worker": "gone:1" if state == "running" else None},
            )  # fmt: skip
            ids.append(found.scalar_one())
    return ids


def _ledger(settings) -> int:
    with settings.catalog().session() as session:
        return session.exec(select(func.count()).select_from(LedgerEntry).where(LedgerEntry.stage == STAGE)).one()


def test_a_database_of_the_previous_version_resumes_its_queued_jobs(make_instance, tmp_path):
    settings = make_instance(tmp_path / "old", auth_secret=SecretStr("s" * 40))
    ids = _write_old_database(settings, tmp_path)
    read_before = _ledger(settings)
    queue = JobQueue(settings.catalog().engine)
    runner = job_runner(queue, settings.job_context(), poll=0.05)
    runner.start()  # takes the dead server's job back first
    try:
        deadline = time.monotonic() + 120
        while any(JobState(j.state).live for j in queue.recent()):
            assert time.monotonic() < deadline, [(j.kind, j.state) for j in queue.recent()]
            time.sleep(0.05)
    finally:
        runner.close()
    snapshot, upload, zotero, watches, backup = (queue.get(i) for i in ids)
    for job in (snapshot, upload, zotero, watches, backup):
        assert job.state == JobState.DONE, (job.kind, job.error)
    assert snapshot.attempts == 2 and "snapshot arxiv-metadata-oai-snapshot" in snapshot.note
    assert _ledger(settings) > read_before >= 3  # resumed after what was read, nothing read twice
    assert upload.note == "upload 424242 was deleted before it was indexed"
    assert zotero.note == "the library was disconnected before its sync ran"
    assert watches.note.startswith("1 saved question run")
    assert (tmp_path / "before.tar").is_file()
    # Each job that brought papers was followed by a run of the saved questions, as that version's were.
    followed = [(j.kind, j.key) for j in queue.recent() if j.id not in ids]
    assert ("watches", "watches") in followed and ("watches", "watches:owner:jo") in followed


def test_rows_of_either_version_read_the_same():
    """The arguments read from a row of the previous version equal those this version writes for the same run; a
    key this version does not know is left aside; every kind is declared."""
    old_update = {"set": "cs", "days": 3, "openalex": True, "s2": False, "pdfs": 0, "analyse": True}
    assert UpdateArguments.from_stored(old_update) == UpdateArguments() and UpdateArguments().to_stored() == {}
    old_pdfs = {"paths": [], "limit": None, "retry_failed": False, "timeout": 60.0, "memory_mb": 1024}
    assert PdfsArguments.from_stored(old_pdfs) == PdfsArguments()
    sync = ZoteroArguments.from_stored({"library": 3, "owner": "kim", "unknown": "a key a later version wrote"})
    assert sync == ZoteroArguments(3, "kim") and sync.key() == "zotero:3"
    assert set(REGISTRY) == set(JobKind) and {str(k) for k in JobKind} >= {"paper", "upload", "watches", "zotero"}
