"""The jobs table: one live job per key, oldest first, cancelling, retrying, the worker's heartbeat."""

from datetime import timedelta

import pytest

from jobs.queue import JobQueue, JobRefused, JobState
from retrieval.scholarly.catalog import Catalog


@pytest.fixture
def queue(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'jobs.db'}")
    yield JobQueue(catalog.engine)
    catalog.close()


def test_jobs_with_one_key_coalesce_while_live_only(queue):
    first, new = queue.submit("paper", {"id": "2401.01234"}, "alice", key="paper:2401.01234")
    again, new_again = queue.submit("paper", {"id": "2401.01234"}, "bob", key="paper:2401.01234")
    assert new and not new_again and again.id == first.id and again.asked_by == "alice"
    other, _ = queue.submit("paper", {"id": "2401.05678"}, "bob", key="paper:2401.05678")
    assert other.id != first.id
    claimed = queue.claim()
    queue.finish(claimed.id, JobState.DONE, {"added": 1})
    later, new_later = queue.submit("paper", {"id": "2401.01234"}, "bob", key="paper:2401.01234")
    assert new_later and later.id not in (first.id, other.id)  # once over, the key is free again


def test_claim_takes_the_oldest_and_a_dead_worker_s_jobs_are_queued_again(queue):
    ids = [queue.submit("pdfs", {"n": n}, "cli")[0].id for n in range(3)]
    queue.beat("host:1", 1)  # alive
    first = queue.claim("host:1")
    assert first.id == ids[0] and first.state == JobState.RUNNING and first.attempts == 1 and first.started_at
    assert first.worker == "host:1"
    assert queue.claim("host:2").id == ids[1]  # host:2 never beat (or died): its job is an orphan
    assert queue.requeue_orphans() == 1 and queue.get(ids[1]).state == JobState.QUEUED
    assert queue.get(ids[0]).state == JobState.RUNNING  # a live worker's job is left alone
    assert queue.requeue_orphans(within=timedelta(seconds=-1)) == 1  # once host:1 stops beating, its job too
    assert [queue.claim("host:3").id for _ in range(3)] == ids and queue.claim("host:3") is None
    assert queue.get(ids[0]).attempts == 2


def test_a_worker_whose_process_is_gone_from_this_host_leaves_orphans_at_once(queue):
    """No waiting for a stale beat when the process is known to be gone: a worker on this host with no such process,
    or a restarted container's worker that comes back under its predecessor's name (same host, same process id)."""
    import os
    import socket
    import subprocess
    import sys

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    dead, live, me = f"{host}:{int(ended.stdout)}", f"{host}:{os.getppid()}", f"{host}:{os.getpid()}"
    ids = [queue.submit("pdfs", {"n": n}, "cli")[0].id for n in range(3)]
    for name in (dead, live, me):
        queue.beat(name, 1)  # all three beat just now
        assert queue.claim(name) is not None
    assert queue.requeue_orphans() == 1 and queue.get(ids[0]).state == JobState.QUEUED  # its process is gone
    assert queue.get(ids[1]).state == queue.get(ids[2]).state == JobState.RUNNING  # a live process; this one
    assert queue.requeue_orphans(starting=me) == 1 and queue.get(ids[2]).state == JobState.QUEUED
    assert queue.get(ids[1]).state == JobState.RUNNING


def test_looking_for_orphans_when_there_are_none_takes_no_write_lock(queue, tmp_path):
    """Each server's job worker looks every few seconds: with nothing to move it only reads, so it never waits for
    (or holds up) another writer, here a process holding SQLite's write lock."""
    import sqlite3

    queue.submit("pdfs", {}, "cli")
    queue.beat("host:1", 1)
    assert queue.claim("host:1") is not None  # a live worker's running job: no orphan
    holder = sqlite3.connect(tmp_path / "jobs.db", timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert queue.requeue_orphans() == 0
    finally:
        holder.rollback()
        holder.close()


def test_cancel_ends_a_queued_job_and_flags_a_running_one(queue):
    waiting, _ = queue.submit("pdfs", {}, "cli", key="a")
    running, _ = queue.submit("pdfs", {}, "cli", key="b")
    queue.claim()  # takes `waiting`
    assert queue.report(waiting.id, [{"description": "x", "completed": 1, "total": 2}]) is False
    assert queue.cancel(waiting.id).state == JobState.RUNNING  # it stops at its next report
    assert queue.report(waiting.id, []) is True
    cancelled = queue.cancel(running.id)
    assert cancelled.state == JobState.CANCELLED and queue.live("b") is None
    assert queue.cancel(10_000) is None


def test_retry_queues_an_ended_job_again_and_refuses_a_live_one(queue):
    job, _ = queue.submit("arxiv", {"query": "ti:x"}, "cli", key="k")
    assert queue.retry(job.id, "admin") is None  # still queued
    queue.finish(queue.claim().id, JobState.FAILED, error="arXiv answered 503")
    again, new = queue.retry(job.id, "admin")
    assert new and again.id != job.id and again.arguments == {"query": "ti:x"} and again.asked_by == "admin"
    assert queue.get(job.id).error == "arXiv answered 503"


def test_a_worker_is_alive_while_it_beats(queue):
    assert queue.worker_alive() is None
    queue.beat("serve", 123)
    assert queue.worker_alive().pid == 123
    assert queue.worker_alive(within=timedelta(seconds=-1)) is None  # a beat older than allowed
    queue.gone("serve")
    assert queue.worker_alive() is None


def at_once(count: int, action) -> list:
    """`action(n)` in `count` threads released together; what each returned or raised."""
    import threading

    gate, results = threading.Barrier(count), [None] * count

    def run(n: int) -> None:
        gate.wait()
        try:
            results[n] = action(n)
        except Exception as exc:  # noqa: BLE001 - kept to be counted
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def daily_share_holds_when_raced(engine) -> None:
    """Thirty requests at once against a daily share of three start exactly three jobs (each request read the count
    and then inserted: all thirty saw zero, and six jobs started against a share of three)."""
    queue = JobQueue(engine)
    results = at_once(30, lambda n: queue.submit("paper", {"id": n}, "alice", key=f"paper:{n}", for_user=True, daily=3))
    started = [r for r in results if isinstance(r, tuple)]
    refused = [r for r in results if isinstance(r, JobRefused)]
    assert len(started) == 3 and len(refused) == 27, results
    assert "asked for 3 papers in the last day" in str(refused[0])
    assert len(queue.recent(asked_by="alice")) == 3


def test_a_daily_share_holds_when_raced(queue):
    daily_share_holds_when_raced(queue.engine)


def test_one_user_has_a_share_of_the_queue_and_users_take_turns(queue):
    """A user may have `user_live` jobs waiting; the worker takes each waiting user's oldest job in turn, so one
    user's many jobs do not make another's one wait behind them (150 PDFs made a one-page file wait 28 s)."""
    queue = JobQueue(queue.engine, user_live=5)
    mallory = [queue.submit("upload", {"n": n}, "mallory", for_user=True)[0].id for n in range(5)]
    with pytest.raises(JobRefused, match="5 files or papers waiting"):
        queue.submit("upload", {"n": 5}, "mallory", for_user=True)
    queue.submit("update", {}, "cli")  # a job not asked for a user has no share to keep
    alice, _ = queue.submit("upload", {"n": 0}, "alice", for_user=True)
    order = [queue.claim("w") for _ in range(3)]
    assert [j.asked_by for j in order] == ["mallory", "cli", "alice"]  # each waiting user's turn, then mallory again
    queue.finish(order[0].id, JobState.DONE)
    assert queue.submit("upload", {"n": 6}, "mallory", for_user=True)[1]  # one ended: room for one more
    assert queue.claim("w").id == mallory[1] and queue.claim("w").id == mallory[2]
    assert alice.id == order[2].id
