"""Every route's body cap (`web.bodies`), one test per kind of route: a declared Content-Length over the cap is
refused before a byte is read, a chunked body the moment it passes it, signed in or not, with the limit in words
(JSON on /api and /mcp, plain text elsewhere). Chainlit's routes are held to theirs on the served app
(`tests/scholarloom/test_uploads.py`)."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from auth.tokens import create_token
from tests.web.test_follow import app_with_users, client_for

KB, MB = 1024, 1024 * 1024
MULTIPART = {"content-type": "multipart/form-data; boundary=x"}
FILE = b'--x\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7\n'  # and on and on


@pytest.fixture(scope="module")
def app(demo):
    return app_with_users(demo, "bea")


class Offered:
    """A body of `total` bytes handed out in chunks as the app asks for them; `sent` is how much it took."""

    def __init__(self, total: int, chunk: int = 64 * KB, start: bytes = b"") -> None:
        self.total, self.chunk, self.start, self.sent = total, chunk, start, 0

    async def stream(self):
        block = b"x" * self.chunk
        if self.start:
            self.sent += len(self.start)
            yield self.start
        while self.sent < self.total:
            self.sent += len(block)
            yield block


def _client(app, user: str | None = None, token: str | None = None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client_for(app, user) if user else httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test", headers=headers)


async def _over(app, method: str, path: str, cap: int, reader: httpx.AsyncClient | None = None, start: bytes = b"",
                **headers) -> tuple[httpx.Response, httpx.Response, int]:  # fmt: skip
    """The route's answers to a declared length one byte over `cap` sent anonymously (its body offered as it is
    asked for: none of it is), and to a chunked body of 4 x `cap` sent by `reader` (someone the route reads a body
    for); and how much of the chunked one was read."""
    async with _client(app) as anonymous:
        declared_body = Offered(cap + 1)
        declared = await anonymous.request(method, path, content=declared_body.stream(),
                                           headers={**headers, "content-length": str(cap + 1)})  # fmt: skip
    assert declared_body.sent == 0  # refused on the headers alone
    chunked_body = Offered(4 * cap, start=start)
    async with reader or _client(app) as client:
        chunked = await client.request(method, path, content=chunked_body.stream(), headers=headers)
    return declared, chunked, chunked_body.sent


def _refused(answer: httpx.Response, words: str, json: bool) -> None:
    assert answer.status_code == 413, (answer.status_code, answer.text[:300])
    assert answer.headers["content-type"].startswith("application/json" if json else "text/plain")
    assert words in (answer.json()["detail"] if json else answer.text)


async def test_a_48_mb_anonymous_correction_is_refused_before_it_is_read(app):
    """The finding: FastAPI parsed the whole JSON body before the route's sign-in check (1.2 s of event loop)."""
    started = time.monotonic()
    declared, chunked, read = await _over(app, "PATCH", "/api/library/1", 48 * MB,
                                          **{"content-type": "application/json"})  # fmt: skip
    for answer in (declared, chunked):
        _refused(answer, "larger than the limit of 256 KB for corrections", json=True)
    assert read <= 256 * KB + 64 * KB  # cut off at the cap, not at 48 MB
    assert time.monotonic() - started < 2


async def test_a_form_takes_64_kb_and_so_does_an_unknown_address(app):
    form = {"content-type": "application/x-www-form-urlencoded"}
    for path in ("/me/tokens", "/me/watching", "/papers/request"):
        declared, chunked, read = await _over(app, "POST", path, 64 * KB, **form)
        for answer in (declared, chunked):
            _refused(answer, "larger than the limit of 64 KB for forms and JSON requests", json=False)
        assert read <= 128 * KB, path
    declared, chunked, read = await _over(app, "POST", "/no/such/address", 64 * KB, **form)
    _refused(declared, "larger than the limit of 64 KB", json=False)
    assert chunked.status_code == 404 and read == 0  # nothing there reads a body


async def test_a_reading_list_takes_2_mb_and_is_refused_before_the_sign_in(app):
    cap = 2 * MB + 64 * KB  # the file and its multipart framing
    declared, chunked, read = await _over(app, "POST", "/api/library/import", cap, client_for(app, "bea"),
                                          start=FILE, **MULTIPART)  # fmt: skip
    for answer in (declared, chunked):
        _refused(answer, "larger than the limit of 2 MB for reading lists", json=True)
    assert read <= cap + 64 * KB
    async with _client(app) as anonymous:
        within = await anonymous.post("/api/library/import", content=b"x" * (2 * MB))
    assert within.status_code == 401  # at the cap: on to the sign-in check


async def test_mcp_takes_256_kb(app, demo):
    token = create_token(demo.catalog().engine, "bea", "an agent")[1]
    mcp = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    declared, chunked, read = await _over(app, "POST", "/mcp", 256 * KB, _client(app, token=token), **mcp)
    for answer in (declared, chunked):
        _refused(answer, "larger than the limit of 256 KB for MCP messages", json=True)
    assert read <= 320 * KB


async def test_an_upload_takes_the_upload_limit(app, demo, caplog):
    caplog.set_level(logging.ERROR)
    limits = demo.upload_limits()
    declared, chunked, read = await _over(app, "POST", "/api/library", limits.request_bytes(),
                                          client_for(app, "bea"), start=FILE, **MULTIPART)  # fmt: skip
    for answer in (declared, chunked):
        _refused(answer, f"larger than the limit of {limits.max_mb} MB for PDF uploads", json=True)
    assert read <= limits.request_bytes() + 64 * KB
    async with _client(app) as anonymous:
        at_the_limit = Offered(limits.request_bytes(), chunk=MB)
        within = await anonymous.post("/api/library", content=at_the_limit.stream(),
                                      headers={"content-length": str(limits.request_bytes())})  # fmt: skip
    assert within.status_code == 401 and at_the_limit.sent == 0  # on to the sign-in check, which reads nothing
    assert not caplog.records  # the route cut short while it read the form failed quietly: it had been answered


def test_the_table_names_every_cap_once():
    """Chainlit's routes take what Chainlit does: its attach button's setting (0: switched off), engine.io's buffer
    for socket.io's posts, and the small default for its JSON routes and sign-in form."""
    from retrieval.library.uploads import UploadLimits
    from web.bodies import body_caps, cap_for

    caps = body_caps(UploadLimits(max_mb=7), chat_upload=lambda: 0)
    size = {(m, p): cap_for(caps, m, p).limit() for m, p in [
        ("POST", "/api/library"), ("POST", "/api/library/import"), ("PATCH", "/api/library/3"), ("POST", "/mcp"),
        ("POST", "/chat/project/file"), ("POST", "/chat/ws/socket.io/"), ("POST", "/chat/project/threads"),
        ("POST", "/chat/login"), ("GET", "/api/library"), ("POST", "/a\n/b")]}  # fmt: skip
    assert list(size.values()) == [7 * MB + 64 * KB, 2 * MB + 64 * KB, 256 * KB, 256 * KB, 0, 1_000_000, 64 * KB,
                                   64 * KB, 64 * KB, 64 * KB]  # fmt: skip
    off = cap_for(caps, "POST", "/chat/project/file").refusal()
    assert off == "Refused: chat uploads are switched off on this server."
