"""Chainlit's storage client for chat element files, on local disk."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any


class LocalFiles:
    """Chainlit's storage client for element files, on local disk under one root, served back by our own route
    (`/chat-files/<key>`) only to the user whose Chainlit id starts the key."""

    URL_PREFIX = "/chat-files/"
    _SAFE = re.compile(r"[^A-Za-z0-9._-]+")

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def path_of(self, object_key: str) -> Path | None:
        """Where a key lives; None for a key that would leave the root or is not one of ours."""
        parts = object_key.split("/")
        if not 2 <= len(parts) <= 3 or any(not p or p != self._SAFE.sub("_", p) or p in (".", "..") for p in parts):
            return None
        path = (self.root / Path(*parts)).resolve()
        return path if path.is_relative_to(self.root) else None

    def safe_key(self, object_key: str) -> str:
        # Chainlit builds keys as "<user id>/<element id>/<element name>"; names come from users, so flatten them.
        return "/".join(self._SAFE.sub("_", p)[:120].strip(".") or "_" for p in object_key.split("/")[:3])

    async def upload_file(
        self,
        object_key: str,
        data: bytes | str,
        mime: str = "application/octet-stream",
        overwrite: bool = True,
        content_disposition: str | None = None,
    ) -> dict[str, Any]:
        key = self.safe_key(object_key)
        path = self.path_of(key)
        if path is None:
            raise ValueError(f"refusing to store a file under {object_key[:80]!r}")
        await asyncio.to_thread(_write, path, data.encode() if isinstance(data, str) else data)  # not in the loop
        return {"object_key": key, "url": self.URL_PREFIX + key}

    async def delete_file(self, object_key: str) -> bool:
        path = self.path_of(object_key)
        if path is None:
            return False
        return await asyncio.to_thread(_unlink, path)

    async def get_read_url(self, object_key: str) -> str:
        return self.URL_PREFIX + object_key

    async def close(self) -> None:
        return None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False
