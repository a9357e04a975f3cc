"""Debian's chromium, driven by Playwright (no browser is downloaded): one per worker, shared by the browser test
modules it runs (each test opens contexts of its own)."""

from __future__ import annotations

import asyncio
import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.browser import CHROMIUM, CHROMIUM_FLAGS, signed_in  # noqa: F401 (the tests import signed_in from here)


def require_chromium() -> None:
    """At a browser test module's top: skip it without chromium, unless CI (SCHOLARLOOM_REQUIRE_BROWSER=1)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("SCHOLARLOOM_REQUIRE_BROWSER") == "1":
            raise RuntimeError("SCHOLARLOOM_REQUIRE_BROWSER=1 but chromium is not installed (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed", allow_module_level=True)


@pytest.fixture(scope="session")
def _chromium():
    """The worker's chromium and the event loop of Playwright's sync API, set aside while no browser test runs: after
    each call the sync API marks its loop as the thread's running one, and the worker's next module's `asyncio.run`
    and async tests would refuse to start. (A launch and its driver cost 1.5 s: a module each used to start one.)"""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
    loop = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    yield chromium, loop
    asyncio._set_running_loop(loop)
    chromium.close()
    playwright.stop()


@pytest.fixture(scope="module")
def browser(_chromium):
    """The worker's chromium for one module: its loop marked running again for as long as the module's tests run,
    as the sync API expects, and set aside after them."""
    chromium, loop = _chromium
    asyncio._set_running_loop(loop)
    yield chromium
    asyncio._set_running_loop(None)


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
