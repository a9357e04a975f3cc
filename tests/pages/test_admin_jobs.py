"""/admin/jobs: admins see every job with its progress and error and may cancel or retry one; nobody else learns
the page exists; a form from another site is refused."""

from __future__ import annotations

import pytest

from auth.accounts import is_admin, set_admin
from retrieval.jobs import JobQueue, JobState
from tests.pages.test_follow import app_with_users, client_for


@pytest.fixture(scope="module")
def app(demo):
    application = app_with_users(demo, "hana", "ivan")
    set_admin(demo.catalog().engine, "hana", True)
    return application


@pytest.fixture
def queue(demo):
    return JobQueue(demo.catalog().engine)


async def test_only_admins_see_the_jobs(app, queue, demo):
    failed, _ = queue.submit("test-kind", {"n": 1}, "ivan")
    queue.claim()
    queue.report(failed.id, [{"description": "parse + embed", "completed": 3, "total": 7}])
    queue.finish(failed.id, JobState.FAILED, {"added": 3}, error='<script>alert("x")</script> arXiv said 503')
    assert is_admin(demo.catalog().engine, "hana") and not is_admin(demo.catalog().engine, "ivan")
    for who in (None, "ivan"):
        page = await client_for(app, who).get("/admin/jobs")
        assert page.status_code == 404 and "test-kind" not in page.text
    page = await client_for(app, "hana").get("/admin/jobs")
    assert page.status_code == 200 and "test-kind" in page.text and "parse + embed: 3/7" in page.text
    assert "<script>alert" not in page.text and "&lt;script&gt;" in page.text  # a job's error is text, escaped
    assert f'action="/admin/jobs/{failed.id}/retry"' in page.text
    assert "Language model: no language model (SCHOLARLOOM_LLM unset)" in page.text  # what the server's probe says
    markdown = await client_for(app, "hana").get("/admin/jobs.md")
    assert markdown.headers["content-type"].startswith("text/markdown") and f"**{failed.id}** test-kind" in markdown.text


async def test_admins_cancel_and_retry_from_this_site_only(app, queue):
    waiting, _ = queue.submit("test-kind", {"n": 2}, "ivan", key="admin-test")
    admin = client_for(app, "hana")
    foreign = await admin.post(f"/admin/jobs/{waiting.id}/cancel", headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403 and queue.get(waiting.id).state == JobState.QUEUED
    ordinary = await client_for(app, "ivan").post(f"/admin/jobs/{waiting.id}/cancel", headers={"Origin": "http://test"})
    assert ordinary.status_code == 404 and queue.get(waiting.id).state == JobState.QUEUED
    done = await admin.post(f"/admin/jobs/{waiting.id}/cancel", headers={"Origin": "http://test"})
    assert done.status_code == 303 and queue.get(waiting.id).state == JobState.CANCELLED
    again = await admin.post(f"/admin/jobs/{waiting.id}/retry", headers={"Origin": "http://test"})
    assert again.status_code == 303
    retried = queue.live("admin-test")
    assert retried.id != waiting.id and retried.asked_by == "hana" and retried.arguments == {"n": 2}
    queue.cancel(retried.id)  # leave nothing queued in the shared demo database
