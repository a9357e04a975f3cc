"""Chainlit's upload route parses the whole body before it checks the size or whether uploads are on: ours
refuses an upload over the limit from its Content-Length, and stops reading one that grows past it (issue 17,
item 10)."""

import asyncio
import socket
from urllib.parse import urlsplit

import pytest

from tests.chat_server import sign_in

MB = 1024 * 1024


def _post(server: str, token: str, headers: dict[str, str], chunks=(), path: str = "/chat/project/file?session_id=none",
          kind: str = "multipart/form-data; boundary=x") -> tuple[str, int]:  # fmt: skip
    """A raw HTTP POST to the upload route (or `path`); sends `chunks` (chunked encoding unless a Content-Length
    is given) until the server answers. Returns the status line and how many body bytes went out before it."""
    address = urlsplit(server)
    framed = "Content-Length" not in headers
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        head = [f"POST {path} HTTP/1.1", f"Host: {address.netloc}", f"Cookie: access_token={token}",
                f"Content-Type: {kind}", *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        sent = 0
        connection.setblocking(False)
        for chunk in chunks:
            try:
                answer = connection.recv(200)
                if answer:
                    return answer.split(b"\r\n")[0].decode(), sent
            except BlockingIOError:
                pass
            try:
                connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if framed else chunk)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        connection.setblocking(True)
        return connection.recv(200).split(b"\r\n")[0].decode(), sent


@pytest.fixture
def uploads_on(server, monkeypatch):
    from chainlit.config import config

    feature = config.features.spontaneous_file_upload
    monkeypatch.setattr(feature, "enabled", True)
    monkeypatch.setattr(feature, "max_size_mb", 2)
    return asyncio.run(sign_in(server, "alice"))


def test_a_declared_size_over_the_limit_is_refused_before_any_byte_is_read(server, uploads_on):
    status, _ = _post(server, uploads_on, {"Content-Length": str(500 * MB)})
    assert status == "HTTP/1.1 413 Request Entity Too Large"


def test_a_body_growing_past_the_limit_is_cut_off(server, uploads_on):
    start = b'--x\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n'
    block = b"\0" * (256 * 1024)
    chunks = (start if n == 0 else block for n in range(401))
    status, sent = _post(server, uploads_on, {"Transfer-Encoding": "chunked"}, chunks)
    assert status == "HTTP/1.1 413 Request Entity Too Large"
    assert sent < 20 * MB  # of 100 MB offered: the server stopped reading a little past its 2 MB


def test_with_uploads_off_nothing_is_read(server, monkeypatch):
    from chainlit.config import config

    monkeypatch.setattr(config.features.spontaneous_file_upload, "enabled", False)  # SCHOLARLOOM_UPLOAD_QUOTA_MB=0
    token = asyncio.run(sign_in(server, "alice"))
    status, _ = _post(server, token, {"Content-Length": "1000"})
    assert status == "HTTP/1.1 413 Request Entity Too Large"


def test_chainlits_json_routes_take_64_kb_and_socket_io_its_buffer(server):
    """Chainlit's other routes (threads, feedback, elements, sign-in) take small JSON or forms: the table's default
    (`web.bodies`); socket.io's posts what engine.io buffers. Refused on the length said, or cut off while read."""
    token = asyncio.run(sign_in(server, "alice"))
    threads, block = "/chat/project/threads", b" " * (64 * 1024)
    declared, _ = _post(server, token, {"Content-Length": str(2 * MB)}, (block for _ in range(32)), threads,
                        "application/json")  # fmt: skip
    assert declared == "HTTP/1.1 413 Request Entity Too Large"
    chunked, sent = _post(server, token, {"Transfer-Encoding": "chunked"}, (block for _ in range(512)), threads,
                          "application/json")  # fmt: skip
    assert chunked == "HTTP/1.1 413 Request Entity Too Large"
    assert sent < 16 * MB  # of 32 MB offered: what the sockets' buffers held when the server answered
    polling, _ = _post(server, token, {"Content-Length": str(2 * MB)}, (block for _ in range(32)),
                       "/chat/ws/socket.io/?EIO=4&transport=polling", "text/plain")  # fmt: skip
    assert polling == "HTTP/1.1 413 Request Entity Too Large"
