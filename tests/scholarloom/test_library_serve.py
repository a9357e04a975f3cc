"""Uploads on a running `scholarloom serve`: a 300 MB body is refused without the server's memory growing, and
the chat answers the owner from her upload's pages while another user's answer never shows it."""

from __future__ import annotations

import asyncio
import select
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.chat_server import ChatClient, sign_in
from tests.conftest import PDFS, first_pages

LONGEVAL = PDFS / "2023.eacl-main.121.pdf"
QUESTION = "What guidelines does the paper give for human evaluation of faithfulness in long-form summarization?"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _post_raw(base: str, token: str, head: dict[str, str], body_mb: int, chunked: bool) -> bytes:
    """A multipart POST written by hand, so the body can be larger than anything held in memory here; stops
    sending once the server has answered (or hung up) and returns what it answered."""
    host, port = urlsplit(base).hostname, urlsplit(base).port
    boundary = "xXx"
    opening = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.pdf\"\r\n"
               "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n").encode()  # fmt: skip
    lines = ["POST /api/library HTTP/1.1", f"Host: {host}:{port}", f"Cookie: access_token={token}",
             f"Content-Type: multipart/form-data; boundary={boundary}",
             *(f"{k}: {v}" for k, v in head.items())]  # fmt: skip
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        chunk = b"0" * (1024 * 1024)
        for piece in [opening] + [chunk] * body_mb:
            if select.select([s], [], [], 0)[0]:  # the server has answered (or hung up): stop sending
                break
            try:
                s.sendall((b"%x\r\n" % len(piece) + piece + b"\r\n") if chunked else piece)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
        answer = b""
        deadline = time.monotonic() + 30
        while b"\r\n\r\n" not in answer and time.monotonic() < deadline:
            try:
                more = s.recv(65536)
            except ConnectionResetError:
                break
            if not more:
                break
            answer += more
    return answer


def test_a_300_mb_upload_is_refused_without_the_server_growing(small_server):
    token = asyncio.run(sign_in(small_server.base, "carol"))
    pid = small_server.process.pid
    before = _rss_mb(pid)
    declared = _post_raw(small_server.base, token, {"Content-Length": str(300 * 1024 * 1024)}, 0, chunked=False)
    assert declared.startswith(b"HTTP/1.1 413"), declared[:200]  # answered on the headers: no body was sent
    streamed = _post_raw(small_server.base, token, {}, 300, chunked=True)  # no length said: cut off at the cap
    assert streamed.startswith(b"HTTP/1.1 413"), streamed[:300]
    assert _rss_mb(pid) - before < 50
    assert not list((small_server.data / "uploads").glob(".incoming-*"))  # the spooled part was removed


async def _upload_and_wait(base: str, token: str, folder, **client) -> dict:
    """The LongEval paper's first four pages (its guidelines for human evaluation are on the third), uploaded with
    the session `token` (or as `client` says: an API token's headers) and indexed."""
    client = client or {"cookies": {"access_token": token}}
    async with httpx.AsyncClient(base_url=base, timeout=30, **client) as http:
        pdf = {"file": ("longeval.pdf", first_pages(LONGEVAL, 4, folder).read_bytes(), "application/pdf")}
        added = await http.post("/api/library", files=pdf)
        assert added.status_code == 201, added.text
        deadline = time.monotonic() + 120
        while (item := (await http.get(f"/api/library/{added.json()['id']}")).json())["state"] == "queued":
            assert time.monotonic() < deadline, item
            await asyncio.sleep(0.5)
    assert item["state"] == "indexed", item
    return item


async def _answer(base: str, user: str, question: str) -> str:
    chat = ChatClient(base, user)
    await chat.connect()
    try:
        await chat.ask(question)
        return chat.messages("assistant_message")[-1]["output"]
    finally:
        await chat.sio.disconnect()


def test_the_chat_answers_from_an_upload_for_its_owner_alone(small_server, tmp_path):
    base = small_server.base

    async def scenario():
        item = await _upload_and_wait(base, await sign_in(base, "carol"), tmp_path)
        mine = await _answer(base, "carol", QUESTION)
        theirs = await _answer(base, "dave", QUESTION)
        return item, mine, theirs

    item, mine, theirs = asyncio.run(scenario())
    assert f"]({item['url']}" in mine and "p. " in mine, mine  # a passage of her upload, with its page
    assert "/me/library/" not in theirs and "Kalpesh" not in theirs and "longeval.pdf" not in theirs, theirs


def test_the_chat_takes_pdfs_only(small_server):
    """The attach button's route refuses anything but a PDF (a PDF read into the library and answered from is
    `tests/browser/test_library_browser.py`, through the real button)."""

    async def scenario():
        chat = ChatClient(small_server.base, "carol")
        await chat.connect()
        try:
            return await chat.attach("notes.txt", b"plain text", "text/plain"), await chat.attach(
                "fake.pdf", b"<html>not a pdf</html>", "text/html")  # fmt: skip
        finally:
            await chat.sio.disconnect()

    text_file, html_file = asyncio.run(scenario())
    assert text_file.status_code == 400 and html_file.status_code == 400


def test_a_chat_about_my_library_searches_its_papers_only(small_server):
    from tests.small_archive import new_user_on

    base = small_server.base
    new_user_on(small_server.data, "gina")

    async def scenario():
        async with httpx.AsyncClient(base_url=base, cookies={"access_token": await sign_in(base, "gina")}) as http:
            empty = await _answer_in_library(base)
            listed = await http.post("/api/library/import", files={"file": ("list.txt", b"2004.07180\n", "text/plain")})
            assert listed.json()["counts"]["joined"] == 1, listed.text
        return empty, await _answer_in_library(base)

    empty, (intro, answer, cards) = asyncio.run(scenario())
    assert "library is empty" in empty[1] and not empty[2]
    assert "searches **[your library](/me/library)** only" in intro
    assert cards and {path.split("-")[0] for path in cards} == {"/papers/2004.07180"}, (answer, cards)  # SPECTER only


async def _answer_in_library(base: str) -> tuple[str, str, list[str]]:
    """The chat opened at /chat?library=mine: its introduction, its answer to a question and the answer's cards."""
    chat = ChatClient(base, "gina")
    await chat.connect(referer=f"{base}/chat?library=mine")
    try:
        await chat.ask("dialog state tracking and document representations from the citation graph")
        said = [m["output"] for m in chat.messages("assistant_message")]
        cards = [e["props"]["path"] for e in chat.event("element") if e.get("name") == "ScholarCard"]
        return said[0], said[-1], cards
    finally:
        await chat.sio.disconnect()
