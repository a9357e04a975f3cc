"""A PDF attached in the chat of a real browser (Debian's chromium driven by Playwright) against `scholarloom
serve` on the small archive: the attach button's file chooser, the file read into the user's library, the
question answered from its pages, and its private page."""

import re

from ingest.demo import DEMO_DIR
from tests.browser.conftest import page_text, require_chromium, screenshot, signed_in
from tests.conftest import REPO, first_pages
from tests.small_archive import new_user_on

SHOTS = REPO / "test-artifacts" / "browser"
PASSWORD = "browser test password"
GRAPH_PDF = DEMO_DIR / "pdfs" / "1805.02262.pdf"
require_chromium()
SHOTS.mkdir(parents=True, exist_ok=True)


def test_a_pdf_attached_in_the_chat_is_read_and_answers_the_question(browser, small_server, tmp_path):
    new_user_on(small_server.data, "frank", PASSWORD)
    base, page = small_server.base, None
    try:
        context, page = signed_in(browser, base, "frank", PASSWORD)
        # Chainlit's dropzone opens Chromium's File System Access picker when the browser has one, which Playwright
        # cannot answer; without it the button opens the ordinary file chooser (as in Firefox and Safari).
        page.add_init_script("delete Window.prototype.showOpenFilePicker; delete window.showOpenFilePicker;")
        page.goto(f"{base}/chat")
        with page.expect_file_chooser(timeout=30_000) as chooser:
            page.click("#upload-button")
        # The smallest shipped PDF's first three pages (its record, not its text, is here).
        chooser.value.set_files(str(first_pages(GRAPH_PDF, 3, tmp_path)))
        page.click("#chat-input")
        page.keyboard.type("How are papers, authors and entities linked in the literature graph?")
        page.locator("#chat-submit:not([disabled])").click(timeout=60_000)
        page.wait_for_selector("text=only you can search it", timeout=120_000)
        link = page.locator("a[href^='/me/library/']", has_text="Construction of the Literature Graph").first
        path = link.get_attribute("href")
        page.wait_for_function(
            "document.body.innerText.includes('From their full text') || document.body.innerText.includes('p. ')",
            timeout=60_000,
        )
        assert re.search(r"p\. \d+", page_text(page))  # the answer quotes the upload's pages
        screenshot(page, SHOTS / "08-pdf-attached.png", full_page=True)
        page.goto(base + path)
        text = page_text(page)
        assert "Construction of the Literature Graph in Semantic Scholar" in text and "Waleed Ammar" in text
        assert "indexed" in text
        context.close()
    except Exception:
        if page is not None and not page.is_closed():
            screenshot(page, SHOTS / "failed-pdf-attached.png", full_page=True)
        raise
