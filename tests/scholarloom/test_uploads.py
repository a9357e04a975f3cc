"""Chainlit's upload route parses the whole body before it checks the size or whether uploads are on: ours
refuses an upload over the limit from its Content-Length, and stops reading one that grows past it (issue 17,
item 10)."""

import asyncio
import socket
from urllib.parse import urlsplit

import pytest

from tests.chat_server import sign_in

MB = 1024 * 1024


def _post(server: str, token: str, headers: dict[str, str], chunks=()) -> tuple[str, int]:
    """A raw HTTP POST to the upload route; sends `chunks` (chunked encoding) until the server answers. Returns
    the status line and how many body bytes went out before the answer."""
    address = urlsplit(server)
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        head = ["POST /chat/project/file?session_id=none HTTP/1.1", f"Host: {address.netloc}",
                f"Cookie: access_token={token}", "Content-Type: multipart/form-data; boundary=x",
                *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
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
                connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
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
