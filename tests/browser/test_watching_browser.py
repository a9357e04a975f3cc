"""A saved question in a real browser (Debian's chromium driven by Playwright) against `scholarloom serve` on the
small archive: asked in the chat, watched with the button under the answer; an `update` job (arXiv's OAI-PMH
answered from real records on a local server) brings a paper that answers it and one that does not; a new chat
shows the badge, every page too, and the saved-questions page the change with the sentences that matched."""

import time

from jobs.queue import JobQueue, JobState
from retrieval.library.watches import Watches
from scholarloom.settings import Settings
from tests.browser.conftest import page_text, require_chromium, screenshot, shot_on_failure, signed_in
from tests.conftest import REPO
from tests.small_archive import new_user_on

SHOTS = REPO / "test-artifacts" / "browser"
PASSWORD = "browser test password"
QUESTION = "Spitzer survey of young stellar objects in the Serpens molecular cloud"
SERPENS, UNRELATED = "0704.0009", "0704.0002"
require_chromium()
SHOTS.mkdir(parents=True, exist_ok=True)


def _jobs_done(engine, kinds: set[str], seconds: float = 120) -> list:
    """The served instance's jobs, once none is waiting or running and each of `kinds` has run."""
    queue, deadline = JobQueue(engine), time.monotonic() + seconds
    while True:
        jobs = queue.recent()
        if kinds <= {j.kind for j in jobs} and not any(JobState(j.state).live for j in jobs):
            return jobs
        assert time.monotonic() < deadline, [(j.kind, j.state) for j in jobs]
        time.sleep(0.2)


def test_a_question_watched_from_the_chat_hears_of_the_update_that_answers_it(browser, small_server, tmp_path):
    new_user_on(small_server.data, "wren", PASSWORD)
    base = small_server.base
    reader = Settings(data_dir=tmp_path / "reader", database_url=f"sqlite:///{small_server.data / 'scholarloom.db'}")
    engine = reader.catalog().engine
    context, page = signed_in(browser, base, "wren", PASSWORD)
    with shot_on_failure(page, SHOTS / "failed-watching.png"):
        # The header links to the saved questions; nothing is new yet, so the chat shows no badge.
        assert page.locator("a[href='/me/watching']").first.is_visible()
        assert page.request.get(base + "/chat/public/bell.svg").headers["content-type"].startswith("image/svg")
        page.click("#chat-input")
        page.keyboard.type(QUESTION)
        page.locator("#chat-submit:not([disabled])").click(timeout=30_000)
        button = page.get_by_role("button", name="Watch this")
        button.wait_for(timeout=60_000)
        assert "new** for your saved questions" not in page_text(page) and "for your saved questions:" not in \
            page_text(page)  # fmt: skip
        button.click()
        page.wait_for_selector(f"text=Watching “{QUESTION}” in the archive", timeout=30_000)
        assert page.get_by_role("button", name="Watch this").count() == 0  # a second click cannot save it twice
        (question,) = Watches(engine).of("wren")
        assert question.query == QUESTION and question.scope == "all" and SERPENS not in question.seen

        # An operator's update (as `scholarloom ingest update --detach` queues it): two new papers, one answers.
        JobQueue(engine).submit("update", {"set": "astro-ph", "days": 400000, "openalex": True, "s2": False,
                                           "pdfs": 0, "analyse": False}, "cli")  # fmt: skip
        jobs = _jobs_done(engine, {"update", "watches"})
        update = next(j for j in jobs if j.kind == "update")
        assert update.state == JobState.DONE and update.counts.get("added") == 2, (update.error, update.counts)
        watches = next(j for j in jobs if j.kind == "watches")
        assert watches.state == JobState.DONE and "with news" in watches.note, watches.error

        page.goto(base + "/chat/")  # a new chat: the badge
        page.wait_for_selector("text=1 new", timeout=30_000)
        assert "for your saved questions" in page_text(page)
        screenshot(page, SHOTS / "watching-01-chat-badge.png")
        page.goto(base + "/papers")  # every page's badge
        assert page.locator("nav.site a.news .badge").inner_text().strip() == "1 new"
        page.locator("nav.site a.news").click()
        page.wait_for_url(f"{base}/me/watching", timeout=15_000)
        change = page.locator("section.change").first
        text = change.inner_text()
        assert "1 new paper on" in text and QUESTION in text, text
        assert "Serpens" in change.locator("a[href^='/papers/0704.0009']").inner_text()
        assert change.locator("blockquote").count() >= 1  # the sentences that matched
        assert "Sparsity-certifying" not in page_text(page)  # the unrelated paper is no news
        screenshot(page, SHOTS / "watching-02-change.png", full_page=True)
        page.goto(base + "/papers")
        assert page.locator("nav.site a.news").count() == 0  # seen: the badge is gone
    context.close()
    reader.close()
