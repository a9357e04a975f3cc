"""Replaying recorded HTTP answers through an httpx transport: no socket is opened."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx


@dataclass
class Route:
    method: str
    host: str
    path: str
    when: Callable[[httpx.Request], bool] = lambda _request: True
    status: int = 200
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    times: int | None = None  # answer this many times, then let later routes answer


class Replay:
    """Routes answer in order of registration; a request no route answers fails the test loudly."""

    def __init__(self) -> None:
        self.routes: list[Route] = []
        self.requests: list[httpx.Request] = []

    def add(self, method, host, path, body: bytes | str | Path | dict | list = b"", status=200, when=None, **kw):
        if isinstance(body, Path):
            body = body.read_bytes()
        elif isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.routes.append(Route(method, host, path, when or (lambda _r: True), status, body, **kw))
        return self

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for route in self.routes:
            if (route.method, route.host, route.path) != (request.method, request.url.host, request.url.path):
                continue
            if route.times == 0 or not route.when(request):
                continue
            if route.times is not None:
                route.times -= 1
            return httpx.Response(route.status, content=route.body, headers=route.headers)
        raise AssertionError(f"no recorded answer for {request.method} {request.url}")

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def params(self, number: int) -> dict[str, str]:
        return dict(self.requests[number].url.params)


def public_resolver(_host: str, _port: int) -> list[str]:
    """DNS for replayed hosts: a documentation-range public address (the transport never connects)."""
    return ["93.184.216.34"]


class LocalServer:
    """Recorded answers served over real HTTP on 127.0.0.1, for commands run the way a user runs them.
    `routes` maps a path to a function of the query parameters returning (status, body bytes)."""

    def __init__(self, routes: dict[str, Callable[[dict], tuple[int, bytes]]]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qsl, urlsplit

        outer = self
        self.seen: list[tuple[str, dict]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                parts = urlsplit(self.path)
                params = dict(parse_qsl(parts.query))
                outer.seen.append((parts.path, params))
                answer = routes.get(parts.path)
                status, body = answer(params) if answer else (404, b'{"error": "not recorded"}')
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
