"""The job worker: runs the oldest job, keeps its progress, and ends it as done, failed, cancelled or queued again."""

import threading
import time
from datetime import timedelta

import pytest

from ingest.report import Failure
from jobs.queue import JobQueue, JobState
from jobs.runner import JobProgress, JobRunner, Schedule, Stopping
from retrieval.scholarly.catalog import Catalog


@pytest.fixture
def queue(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'jobs.db'}")
    yield JobQueue(catalog.engine)
    catalog.close()


def _count(args, summary, progress):
    task = progress.add_task("counting", total=args["n"])
    for _ in range(args["n"]):
        summary.add("added")
        progress.advance(task)
    summary.fail(Failure("test", "k1", "one bad record"))
    return f"counted {args['n']}"


def _broken(args, summary, progress):
    summary.add("added", 2)
    raise RuntimeError("the service answered 503")


def _wait(queue, job_id, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = queue.get(job_id)
        if not JobState(job.state).live:
            return job
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} still {queue.get(job_id).state}")


def test_the_worker_runs_jobs_and_records_how_they_ended(queue):
    runner = JobRunner(queue, {"count": _count, "broken": _broken}, poll=0.05)
    done_id = queue.submit("count", {"n": 5}, "cli")[0].id
    broken_id = queue.submit("broken", {}, "cli")[0].id
    unknown_id = queue.submit("nothing", {}, "cli")[0].id
    runner.start()
    try:
        done, broken, unknown = (_wait(queue, i) for i in (done_id, broken_id, unknown_id))
    finally:
        runner.close()
    assert done.state == JobState.DONE and done.counts == {"added": 5, "failed": 1} and done.note == "counted 5"
    assert done.progress == [{"description": "counting", "completed": 5, "total": 5}]
    assert done.failures == [{"source": "test", "key": "k1", "reason": "one bad record"}]
    assert broken.state == JobState.FAILED and "503" in broken.error and broken.counts == {"added": 2}
    assert unknown.state == JobState.FAILED and "unknown kind" in unknown.error
    assert queue.worker_alive() is None  # gone once closed


def test_a_cancelled_job_stops_at_its_next_report(queue):
    started, release = threading.Event(), threading.Event()

    def slow(args, summary, progress):
        task = progress.add_task("slow", total=100)
        started.set()
        release.wait(5)
        for _ in range(100):
            summary.add("added")
            progress.advance(task)
            time.sleep(0.01)

    runner = JobRunner(queue, {"slow": slow}, poll=0.05)
    job_id = queue.submit("slow", {}, "cli")[0].id
    runner.start()
    try:
        assert started.wait(5)
        queue.cancel(job_id)
        release.set()
        job = _wait(queue, job_id)
    finally:
        runner.close()
    assert job.state == JobState.CANCELLED and 0 < job.counts["added"] < 100


def test_a_stopping_server_puts_its_job_back_in_the_queue(queue):
    stop = threading.Event()
    progress = JobProgress(queue, queue.submit("x", {}, "cli")[0].id, stop, every=0)
    task = progress.add_task("a", total=2)
    stop.set()
    with pytest.raises(Stopping):
        progress.advance(task)

    started = threading.Event()

    def endless(args, summary, progress):
        task = progress.add_task("endless")
        started.set()
        while True:
            progress.advance(task)
            time.sleep(0.01)

    runner = JobRunner(queue, {"endless": endless}, poll=0.05)
    job_id = queue.submit("endless", {}, "cli")[0].id
    runner.start()
    assert started.wait(5)
    time.sleep(0.1)
    runner.close()
    job = queue.get(job_id)
    assert job.state == JobState.QUEUED and job.progress[0]["completed"] > 0  # the next start resumes it


def test_progress_is_saved_at_most_every_interval(queue):
    now = [0.0]
    job_id = queue.submit("x", {}, "cli")[0].id
    progress = JobProgress(queue, job_id, threading.Event(), every=1.0, clock=lambda: now[0])
    task = progress.add_task("a", total=10)  # saved at once
    progress.advance(task)
    assert queue.get(job_id).progress[0]["completed"] == 0  # not yet: less than a second later
    now[0] = 1.5
    progress.advance(task)
    assert queue.get(job_id).progress[0]["completed"] == 2


def test_a_schedule_queues_its_job_when_due(queue):
    ran = threading.Event()
    runner = JobRunner(
        queue, {"update": lambda a, s, p: ran.set()}, poll=0.05, schedule=Schedule("update", {}, timedelta(hours=1))
    )
    runner.start()
    try:
        assert ran.wait(5)
        time.sleep(0.3)  # several more turns of the loop: not due again within the hour
    finally:
        runner.close()
    jobs = queue.recent()
    assert [(j.kind, j.asked_by) for j in jobs] == [("update", "schedule")]


def test_update_intervals_read_as_people_write_them():
    from jobs.runner import interval
    from scholarloom.settings import Settings

    assert interval("24h") == timedelta(hours=24) and interval("90m") == timedelta(minutes=90)
    assert interval("2d") == timedelta(days=2) and interval(" 3600 ") == timedelta(hours=1)
    for bad in ("soon", "5s", "-1h", "1w"):
        with pytest.raises(ValueError):
            interval(bad)
    assert Settings(update_every="12h").update_interval() == timedelta(hours=12)
    assert Settings().update_interval() is None


def test_serve_s_runner_schedules_updates_only_when_asked(make_instance, tmp_path):
    from scholarloom.runtime import Runtime

    quiet = Runtime.build(make_instance(tmp_path / "quiet")).job_runner()
    assert quiet.schedule is None
    daily = Runtime.build(make_instance(tmp_path / "daily", update_every="24h")).job_runner()
    assert daily.schedule == Schedule("update", {}, timedelta(hours=24)) and "update" in daily.kinds
