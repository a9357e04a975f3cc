"""Chainlit's built front end, compressed once per process instead of on every request.

Chainlit serves `/chat/assets/*` through its GZip middleware, which compresses the whole file again for each request
at level 9: its JS bundle is 4.6 MB, 0.23 s of the server's CPU every time a browser opens the chat without the
bundle in its cache (`bench/chat_assets.py`; 0.003 s with this route). The route in front of it
(`chat_assets_route`) keeps each compressed file in memory after its first request. The files' names carry a hash
of their content, so a browser may also keep them: a year, immutable. The folder is Chainlit's own build
(`chainlit.server.build_dir`), read-only; a name that leaves it is not found.
"""

from __future__ import annotations

import gzip
import mimetypes
import threading
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response

COMPRESSIBLE = (".js", ".mjs", ".css", ".svg", ".json", ".html", ".txt")
KEPT_UP_TO = 8 * 1024 * 1024  # larger files (source maps, read only by developer tools) go out as they are
IMMUTABLE = {"Cache-Control": "public, max-age=31536000, immutable"}


class ChatAssets:
    """The files of one folder; the gzip of each compressible file kept after its first request."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self._gzipped: dict[Path, bytes] = {}
        self._lock = threading.Lock()
        self.compressed = 0  # how many times a file was compressed (once each)

    def _file(self, name: str) -> Path:
        try:  # a NUL byte or an overlong name is no file of ours either (not a 500)
            path = (self.folder / name).resolve()
            found = path.is_relative_to(self.folder) and path.is_file()
        except (ValueError, OSError):
            found = False
        if not found:
            raise HTTPException(status_code=404, detail="File not found")
        return path

    def _gzip(self, path: Path) -> bytes:  # (in a worker thread: compressing the bundle takes a while)
        with self._lock:
            if path not in self._gzipped:
                self._gzipped[path] = gzip.compress(path.read_bytes(), 9, mtime=0)
                self.compressed += 1
            return self._gzipped[path]

    async def response(self, name: str, accept_encoding: str) -> Response:
        path = self._file(name)
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if (
            accepts_gzip(accept_encoding)
            and path.suffix in COMPRESSIBLE
            and 500 <= path.stat().st_size <= KEPT_UP_TO
        ):
            body = await run_in_threadpool(self._gzip, path)
            headers = {**IMMUTABLE, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
            return Response(body, media_type=media_type, headers=headers)
        return FileResponse(path, media_type=media_type, headers={**IMMUTABLE, "Vary": "Accept-Encoding"})


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header takes gzip: named (or `*`) with a weight above 0 ("gzip;q=0" refuses it)."""
    for part in accept_encoding.lower().split(","):
        name, _, params = part.partition(";")
        if name.strip() in ("gzip", "*"):
            weight = params.strip().removeprefix("q=")
            try:
                return not weight or float(weight) > 0
            except ValueError:
                return False
    return False


def chat_assets_route(app, folder: Path, prefix: str = "/chat/assets") -> ChatAssets:
    """Serve `folder` at `prefix` on `app`, ahead of Chainlit's mount (call it before mounting Chainlit)."""
    assets = ChatAssets(folder)

    async def chat_asset(filename: str, request: Request) -> Response:
        return await assets.response(filename, request.headers.get("accept-encoding", ""))

    app.add_api_route(prefix + "/{filename:path}", chat_asset, methods=["GET"], include_in_schema=False)
    return assets
