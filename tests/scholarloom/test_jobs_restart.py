"""A server killed in the middle of a job finishes it after a restart: nothing lost, nothing twice. (A file of its
own: it compares with the demo's passages, so it runs with the tests that wait for the demo build.)"""

import os
import shutil
import signal
import subprocess
import time

from harness.serve import child_environment, free_port, served
from ingest.demo import DEMO_DIR
from jobs.queue import JobState
from retrieval.vectors.index import Filters
from tests.scholarloom.test_jobs_serve import SCHOLARLOOM, _archive, _queue

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
            [SCHOLARLOOM, "ingest", "pdfs", str(folder), "--detach"], env=child_environment(data), capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
        assert handed.returncode == 0 and "runs there as job" in handed.stdout, handed.stdout + handed.stderr
        queue = _queue(make_instance, tmp_path, data)
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

        from retrieval.scholarly.models import LedgerEntry

        done_files = session.exec(
            select(func.count()).select_from(LedgerEntry).where(LedgerEntry.stage == "fulltext")
        ).one()
    # The same passages as the demo's one uninterrupted load of these PDFs: nothing lost, nothing twice.
    expected = demo.index().count(Filters(kinds=("passage",), paper_ids=SMALL_PDFS))
    assert done_files == 3 and passages == expected > 0
