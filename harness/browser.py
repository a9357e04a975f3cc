"""Debian's chromium as the browser tests and the documents' screenshots drive it (Playwright): where it is, how it
starts, and a context signed in to the chat. Nothing leaves this machine: the page's requests to other sites (web
fonts, a KaTeX stylesheet on CDNs) are refused."""

from __future__ import annotations

import shutil

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


def local_context(browser, base: str, width: int = 1280, height: int = 900):
    """A new browser context that reaches `base` only."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
    return context


def signed_in(browser, base: str, user: str, password: str, width: int = 1280, height: int = 900,
              timeout_ms: int = 30_000):  # fmt: skip
    """A new local context signed in to the chat at `base` as `user`: (context, page)."""
    context = local_context(browser, base, width, height)
    page = context.new_page()
    page.goto(base + "/chat/")
    page.fill("#email", user)
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_selector("#chat-input", timeout=timeout_ms)
    return context, page
