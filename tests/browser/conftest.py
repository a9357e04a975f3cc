"""Debian's chromium, driven by Playwright (no browser is downloaded): one per test module."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """At a browser test module's top: skip it without chromium, unless CI (SCHOLARLOOM_REQUIRE_BROWSER=1)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("SCHOLARLOOM_REQUIRE_BROWSER") == "1":
            raise RuntimeError("SCHOLARLOOM_REQUIRE_BROWSER=1 but chromium is not installed (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def signed_in(browser, base: str, user: str, password: str):
    """A new browser context signed in to the chat at `base` as `user`: (context, page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # The page asks for web fonts and a KaTeX stylesheet on CDNs: nothing leaves this machine.
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
    page = context.new_page()
    page.goto(base + "/chat/")
    page.fill("#email", user)
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_selector("#chat-input", timeout=30_000)
    return context, page


def screenshot(page, path: Path, full_page: bool = False) -> None:
    """A screenshot at `path`. Chromium now and then refuses a capture ("Unable to capture screenshot", a known
    transient of its `Page.captureScreenshot`) and takes the same picture when asked again: asked once more then."""
    from playwright.sync_api import Error

    try:
        page.screenshot(path=path, full_page=full_page)
    except Error as exc:
        if "Unable to capture screenshot" not in str(exc):
            raise
        page.wait_for_timeout(250)
        page.screenshot(path=path, full_page=full_page)


@contextmanager
def shot_on_failure(page, path: Path):
    """A full-page screenshot at `path` when what runs inside fails (the failure goes on)."""
    try:
        yield
    except Exception:
        if not page.is_closed():
            screenshot(page, path, full_page=True)
        raise


def page_text(page) -> str:
    return page.inner_text("body")
