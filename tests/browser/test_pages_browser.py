"""The browsing pages in a real browser (Debian's chromium through Playwright): axe-core finds no serious or
critical accessibility violation on any kind of page, the keyboard reaches the search first, and a screenshot of
each page at desktop and phone widths is kept in test-artifacts/pages/."""

from __future__ import annotations

import re

from tests.browser.conftest import require_chromium, screenshot, shot_on_failure
from tests.chat_server import PASSWORD
from tests.conftest import REPO

SHOTS = REPO / "test-artifacts" / "pages"
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
PAPER = "/papers/2006.07357-hindsight-logging-for-model-training"
require_chromium()
SHOTS.mkdir(parents=True, exist_ok=True)


def _addresses(server) -> dict[str, str]:
    """One page of each kind, found by following links as a reader would."""
    import httpx
    from bs4 import BeautifulSoup

    paper = BeautifulSoup(httpx.get(server + PAPER).text, "html.parser")
    researcher = paper.select_one(".authors .author > a")["href"]
    home = BeautifulSoup(httpx.get(server + "/").text, "html.parser")
    institution = next(a["href"] for a in home.select("main a") if a["href"].startswith("/institutions/"))
    return {
        "home": "/", "paper": PAPER, "researcher": researcher, "institution": institution,
        "search": "/search?q=papers+by+Bobby+Yan", "papers": "/papers?category=cs.LG",
        "not-found": "/papers/0000.00000",
        "developers": "/developers", "about": "/about", "privacy": "/privacy", "researchers": "/researchers",
        "compare": "/compare?ids=2004.07180,1802.05365,2005.02877&aspects=task,data+set,method,training+details",
    }  # fmt: skip


def test_every_kind_of_page_passes_axe_and_is_photographed(server, browser):
    from axe_playwright_python.sync_playwright import Axe

    axe, found = Axe(), {}
    for width, viewport in WIDTHS.items():
        context = browser.new_context(viewport=viewport)
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server) else route.abort())
        page = context.new_page()
        for name, address in _addresses(server).items():
            response = page.goto(server + address)
            assert response.status == (404 if name == "not-found" else 200), address
            shot = SHOTS / f"{name}-{width}.png"
            screenshot(page, str(shot), full_page=True)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            if width == "desktop":  # (the rules do not depend on the width; the screenshots do)
                violations = axe.run(page).response["violations"]
                found[name] = [
                    f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
                    for v in violations if v["impact"] in ("serious", "critical")
                ]  # fmt: skip
        context.close()
    assert not {name: problems for name, problems in found.items() if problems}
    assert len(found) == 12


def test_the_keyboard_reaches_the_search_first(server, browser):
    context = browser.new_context(viewport=WIDTHS["desktop"])
    page = context.new_page()
    page.goto(server + PAPER)
    focused = []
    while len(focused) < 3 and not re.search(r'<input[^>]*type="search"', "".join(focused[-1:])):
        page.keyboard.press("Tab")
        focused.append(page.evaluate("document.activeElement.outerHTML.slice(0, 120)"))
    assert re.search(r'<input[^>]*type="search"', focused[-1]), focused  # within three presses of Tab
    page.keyboard.type("hindsight logging")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/search\?q=hindsight\+logging"))
    assert page.locator("ol.results li").count() > 0
    context.close()


def _signed_in(server, browser):
    """alice, signed in through the chat's form, in a context that reaches nothing but this server."""
    context = browser.new_context(viewport=WIDTHS["desktop"])
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server) else route.abort())
    page = context.new_page()
    page.goto(server + "/chat/")
    page.fill("#email", "alice")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("#chat-input", timeout=30_000)
    return context, page


def test_the_chat_dock_opens_a_chat_about_the_pages_paper_from_the_keyboard(server, browser):
    """Signed in, a paper page's dock (the last control on the page: Shift+Tab from the top reaches it) opens the
    chat in a panel, scoped to that paper; the page itself stays where it was."""
    context, page = _signed_in(server, browser)
    page.goto(server + "/about")  # (away from the chat, whose page may still be talking to the server)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(f"{request.url} from {request.frame.url}"))
    page.goto(server + PAPER)
    page.wait_for_timeout(1500)
    assert not [url for url in asked if "/chat" in url], asked  # a closed dock loads nothing: no session per view
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.textContent") == "Chat about this paper"
    page.keyboard.press("Enter")
    frame = page.frame_locator("aside.dock iframe")
    frame.locator("#chat-input").wait_for(timeout=30_000)
    frame.get_by_text("This chat is about").wait_for(timeout=30_000)
    assert "Hindsight Logging for Model Training" in frame.locator("body").inner_text()
    assert page.url == server + PAPER
    screenshot(page, str(SHOTS / "paper-dock-open-desktop.png"))
    context.close()


KEYBOARD_TARGETS = """() => {
  const all = [...document.querySelectorAll(
    'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])')];
  // (what a closed <details> folds is reached by opening it: its <summary> is the action, and is counted)
  const folded = e => { const d = e.closest('details:not([open])'); return d && !e.closest('summary'); };
  const shown = all.filter(e => e.getClientRects().length > 0 && !e.disabled && !e.closest('[inert]') && !folded(e));
  shown.forEach((e, i) => e.setAttribute('data-kb', String(i)));
  return shown.map(e => e.outerHTML.slice(0, 80));
}"""


# Every element that takes the focus, noted by the page itself (one round trip per Tab, not two).
FOCUS_LOG = """() => {
  window.__visited = new Set();
  document.addEventListener('focusin', e => {
    const key = e.target.getAttribute && e.target.getAttribute('data-kb');
    if (key != null) window.__visited.add(Number(key));
  }, true);
}"""


def test_the_keyboard_reaches_every_action_of_every_page(server, browser):
    """Tab alone, from the top, visits every link, button, field and the chat dock of each kind of page, signed in
    (so the follow buttons and the dock's chat are there)."""
    context, page = _signed_in(server, browser)
    missed = {}
    for name, address in _addresses(server).items():
        page.goto(server + address)
        targets = page.evaluate(KEYBOARD_TARGETS)
        page.evaluate(FOCUS_LOG)
        presses, limit = 0, 2 * len(targets) + 10  # (a date field takes a Tab per part)
        while presses < limit and page.evaluate("window.__visited.size") < len(targets):
            for _ in range(min(10, limit - presses)):  # the page notes each focus: asked every ten presses
                page.keyboard.press("Tab")
                presses += 1
        visited = set(page.evaluate("[...window.__visited]"))
        missed[name] = [targets[i] for i in range(len(targets)) if i not in visited]
        assert len(targets) > 5, (name, targets)
    assert not {name: m for name, m in missed.items() if m}
    context.close()


TRIPPY = "/papers/2005.02877"


def test_a_reference_leads_to_its_fetch_page_and_back_and_both_pictures_pass_axe(server, browser):
    """Issue 40: from TripPy's page, a reference not held opens our own page for its id, which offers the fetch
    (signed out: sign in first), and the browser's back returns to the references. The citation neighbourhood's
    nodes are the reference list's links (one of them followed, by a click on the picture), and axe-core finds no
    violation at all, of any impact, in either picture (TripPy's neighbourhood, a researcher's network)."""
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport=WIDTHS["desktop"])
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server) else route.abort())
    page, axe = context.new_page(), Axe()
    with shot_on_failure(page, SHOTS / "failed-references.png"):
        page.goto(server + TRIPPY)
        listed = page.eval_on_selector_all("#references ol.refs a", "links => links.map(a => a.getAttribute('href'))")
        drawn = page.eval_on_selector_all("#neighbourhood svg a", "links => links.map(a => a.getAttribute('href'))")
        assert drawn and drawn == listed[: len(drawn)]
        assert page.locator("#neighbourhood svg").get_attribute("aria-label").startswith("Citation neighbourhood of")
        problems = axe.run(page, context="#neighbourhood")
        assert problems.response["violations"] == [], problems.response["violations"]

        page.click('#references ol.refs a[href="/papers/1810.00278"]')  # BERT-DST: not held here
        page.wait_for_url("**/papers/1810.00278")
        offer = page.locator("section.fetch-offer").inner_text()
        assert "Sign in" in offer and "fetch it from arXiv" in offer
        page.go_back()
        page.wait_for_url(re.compile(r"/papers/2005\.02877-"))
        assert page.locator("#references").is_visible()

        held = page.locator("#neighbourhood svg a:has(circle.held)").first
        target = held.get_attribute("href")
        held.click()  # a node of the picture is a link like any other
        page.wait_for_url(f"**{target}")
        assert "Not found" not in page.inner_text("h1")
        screenshot(page, SHOTS / "neighbourhood-followed.png")

        page.goto(server + PAPER)
        researcher = page.locator(".authors .author > a").first.get_attribute("href")
        page.goto(server + researcher)
        nodes = page.eval_on_selector_all("#network svg a", "links => links.map(a => a.getAttribute('href'))")
        people = page.eval_on_selector_all("#network ul.people a", "links => links.map(a => a.getAttribute('href'))")
        assert nodes and nodes == people
        problems = axe.run(page, context="#network")
        assert problems.response["violations"] == [], problems.response["violations"]
        screenshot(page, SHOTS / "network-desktop.png", full_page=True)
    context.close()
