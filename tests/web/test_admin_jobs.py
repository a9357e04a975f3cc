"""/admin/jobs: admins see every job with its progress and error and may cancel or retry one; nobody else learns
the page exists; a form from another site is refused."""

from __future__ import annotations

import pytest

from auth.accounts import is_admin, set_admin
from jobs.queue import JobQueue, JobState
from tests.web.test_follow import app_with_users, client_for


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


async def test_every_server_on_the_database_and_its_model_are_listed(app, queue):
    """Two `serve` processes on one database: either one's page names both and what each one's model can do."""
    queue.beat("lab-a:101", 101)
    queue.say_model("lab-a:101", 101, "openai/gpt-4o-mini: answers, streams, calls tools")
    queue.say_model("lab-b:202", 202, "ollama_chat/qwen2.5: <b>did not call a tool</b>")  # said before its first beat
    queue.beat("lab-b:202", 202)
    try:
        page = await client_for(app, "hana").get("/admin/jobs")
        assert "2 servers are taking jobs: lab-a:101, lab-b:202." in page.text
        assert "lab-a:101: openai/gpt-4o-mini: answers, streams, calls tools" in page.text
        assert "lab-b:202: ollama_chat/qwen2.5: &lt;b&gt;did not call a tool" in page.text
    finally:
        queue.gone("lab-a:101")
        queue.gone("lab-b:202")
    page = await client_for(app, "hana").get("/admin/jobs")
    assert "lab-a:101" not in page.text and "Language model: no language model (SCHOLARLOOM_LLM unset)" in page.text


async def test_only_admins_see_the_models_use_per_user_and_day(app, demo):
    from datetime import datetime, timezone

    from auth.usage import record_usage

    engine = demo.catalog().engine
    day = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
    record_usage(engine, "ivan", "openai/gpt-4o-mini", "agent", 1200, 300, cost_usd=0.00036, now=day)
    record_usage(engine, "ivan", "openai/gpt-4o-mini", "pipeline", 800, 200, cost_usd=0.00024, now=day)
    record_usage(engine, "<b>eve</b>", "ollama_chat/qwen2.5", "agent", 50, 10, estimated=True, now=day)
    for who in (None, "ivan"):
        page = await client_for(app, who).get("/admin/usage")
        assert page.status_code == 404 and "gpt-4o" not in page.text and "1,200" not in page.text
    page = await client_for(app, "hana").get("/admin/usage")
    assert page.status_code == 200 and "<b>eve</b>" not in page.text and "&lt;b&gt;eve&lt;/b&gt;" in page.text
    markdown = (await client_for(app, "hana").get("/admin/usage.md")).text
    assert "| 2026-11-30 | ivan | 2 | 2,000 | 500 | $0.0006 |" in markdown
    assert "| 2026-11-30 | &lt;b&gt;eve&lt;/b&gt; | 1 (1 estimated) | 50 | 10 | unknown |" in markdown
