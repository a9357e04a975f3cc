"""A paper that is not here, requested from its 404 page in a real browser (Debian's chromium driven by Playwright)
against `scholarloom serve` on the small archive, with arXiv, OpenAlex and the PDF answered from recordings."""

import re

from tests.browser.conftest import page_text, require_chromium, screenshot, signed_in
from tests.conftest import REPO
from tests.ingest.ondemand_fixtures import ALSO_ASKED
from tests.small_archive import new_user_on

SHOTS = REPO / "test-artifacts" / "browser"
PASSWORD = "browser test password"
require_chromium()
SHOTS.mkdir(parents=True, exist_ok=True)


def test_the_404_pages_button_fetches_a_paper_and_opens_it(browser, small_server):
    """A paper that is not here: the 404 page's button starts the job, the follow page reloads itself until the
    paper is in, then opens its page. arXiv, OpenAlex and the PDF are recorded answers on a local server."""
    new_user_on(small_server.data, "erin", PASSWORD)
    base, page = small_server.base, None
    try:
        context, page = signed_in(browser, base, "erin", PASSWORD)
        page.goto(f"{base}/papers/{ALSO_ASKED}")
        assert "No paper with the address" in page_text(page)
        page.click(f"text=Fetch {ALSO_ASKED} from arXiv")
        page.wait_for_url(re.compile(r"/papers/requests/\d+\?for=\w+$"), timeout=15_000)
        page.wait_for_url(re.compile(rf"/papers/{re.escape(ALSO_ASKED)}[^/]*$"), timeout=90_000)
        assert page.locator("h1").first.inner_text().strip()  # the new paper's page, with its title
        assert "Not found" not in page_text(page)
        context.close()
    except Exception:
        if page is not None and not page.is_closed():
            screenshot(page, SHOTS / "failed-on-demand.png", full_page=True)
        raise
