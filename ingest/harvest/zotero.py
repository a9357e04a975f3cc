"""Zotero's web API (v3), and the local API of Zotero 7 desktop, which answers the same requests: what a library
holds and what changed in it since a version, read through the polite client (`ingest.http`).

Documented at https://www.zotero.org/support/dev/web_api/v3/basics (requests, `Zotero-API-Key`, paging with
`limit`/`start` and `Total-Results`), .../v3/syncing (`since`, `Last-Modified-Version`, `If-Modified-Since-Version`
and 304, `<prefix>/deleted`), .../v3/file_upload (an attachment's file: `<prefix>/items/<key>/file`, a redirect to
the file's storage) and .../v3/local_api (the desktop's `http://localhost:23119/api`, user library `/users/0`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.http import FetchError

PAGE = 100


class ZoteroRefused(Exception):
    """Zotero will not let this key read this library (or there is no such library): the message says what to do."""


class ZoteroChanged(Exception):
    """The library changed while it was being read: the sync should start again."""


class ZoteroTooLarge(Exception):
    """A listing holds more objects than the caller will read (Zotero's `Total-Results` of its first page)."""

    def __init__(self, total: int) -> None:
        super().__init__(f"{total:,} objects")
        self.total = total


@dataclass
class Changes:
    """What changed in a library since a version: its version now, and the changed and deleted objects."""

    version: int
    collections: list[dict] = field(default_factory=list)  # each collection's `data`
    items: list[dict] = field(default_factory=list)  # each item's JSON (`key`, `version`, `data`, `links`)
    deleted_collections: list[str] = field(default_factory=list)
    deleted_items: list[str] = field(default_factory=list)

    @property
    def nothing(self) -> bool:
        return not (self.collections or self.items or self.deleted_collections or self.deleted_items)


def _header(response, name: str) -> str | None:
    return next((v for k, v in response.headers.items() if k.lower() == name), None)


def _version(response) -> int:
    raw = _header(response, "last-modified-version") or ""
    if not raw.isdigit():
        raise FetchError(f"Zotero answered {response.url[:120]} without a library version")
    return int(raw)


class Zotero:
    """One library: `prefix` is `/users/<id>` or `/groups/<id>`; `key` None for the local API."""

    def __init__(self, client, base: str, prefix: str, key: str | None) -> None:
        self.client, self.base, self.prefix, self.key = client, base.rstrip("/"), prefix, key

    def _get(self, path: str, params: dict | None = None, headers: dict | None = None, max_bytes: int | None = None):
        sent = {"Zotero-API-Version": "3", **({"Zotero-API-Key": self.key} if self.key else {}), **(headers or {})}
        try:
            return self.client.get(self.base + path, params=params, headers=sent, max_bytes=max_bytes)
        except FetchError as exc:
            if exc.status in (401, 403):
                raise ZoteroRefused(
                    f"Zotero refused this key for the library {self.prefix} ({exc.status}): check that the key may "
                    "read this library (and its files), or make a new one at https://www.zotero.org/settings/keys."
                ) from None
            if exc.status == 404:
                raise ZoteroRefused(f"Zotero has no library {self.prefix} (404): check the user or group id.") from None
            raise

    def name(self) -> str:
        """What the library is called, once the key is known to read it (the key's user, or the group's name)."""
        if self.key is None:  # the local API: the desktop's own user library, no key
            self._get(f"{self.prefix}/collections", {"limit": 1})
            return "Zotero desktop (local API)"
        info = self._get("/keys/current").json()
        access = info.get("access") or {}
        kind, number = self.prefix.strip("/").split("/")
        if kind == "users":
            if str(info.get("userID")) != number or not (access.get("user") or {}).get("library"):
                raise ZoteroRefused(f"This key belongs to Zotero user {info.get('userID')}, not to {number}: use "
                                    "the user id shown beside your keys at https://www.zotero.org/settings/keys.")
            return str(info.get("username") or f"Zotero user {number}")
        groups = access.get("groups") or {}
        if not ((groups.get("all") or {}).get("library") or (groups.get(number) or {}).get("library")):
            raise ZoteroRefused(f"This key may not read the group {number}: give it read access to the group.")
        group = self._get(f"/groups/{number}").json()
        return str((group.get("data") or {}).get("name") or f"Zotero group {number}")

    def _all(self, path: str, since: int, params: dict | None = None, most: int | None = None) -> tuple[int, list]:
        """Every object of a listing changed since `since` (all pages), and the library version it was read at;
        ZoteroTooLarge after the first page when its `Total-Results` is over `most`."""
        found, start, version = [], 0, None
        while True:
            response = self._get(path, {"since": since, "limit": PAGE, "start": start, **(params or {})})
            now = _version(response)
            if version is not None and now != version:
                raise ZoteroChanged(f"the library changed while it was read (version {version}, then {now})")
            version = now
            page = response.json()
            found += page
            total = int(_header(response, "total-results") or len(found))
            if most is not None and total > most:
                raise ZoteroTooLarge(total)
            start += PAGE
            if not page or start >= total:
                return version, found

    def changes(self, since: int, most: int | None = None) -> Changes | None:
        """What changed since library version `since` (0: everything); None when nothing did (304). ZoteroTooLarge
        when more than `most` items changed (attachments and notes count), known from the first page of items."""
        if since:
            probe = self._get(f"{self.prefix}/items", {"limit": 1, "format": "versions"},
                              {"If-Modified-Since-Version": str(since)})  # fmt: skip
            if probe.status == 304:
                return None
        version, collections = self._all(f"{self.prefix}/collections", since)
        items_version, items = self._all(f"{self.prefix}/items", since, {"includeTrashed": 1}, most)
        if items_version != version:
            raise ZoteroChanged(f"the library changed while it was read (version {version}, then {items_version})")
        changes = Changes(version, [c.get("data") or c for c in collections], items)
        if since:
            response = self._get(f"{self.prefix}/deleted", {"since": since})
            if _version(response) != version:
                raise ZoteroChanged("the library changed while it was read")
            deleted = response.json()
            changes.deleted_collections = [str(k) for k in deleted.get("collections") or []]
            changes.deleted_items = [str(k) for k in deleted.get("items") or []]
        return changes

    def file(self, key: str, max_bytes: int | None = None) -> bytes:
        """An attachment's file (Zotero redirects to its storage: a host the client must allow); FetchTooLarge as
        soon as it is longer than `max_bytes`."""
        return self._get(f"{self.prefix}/items/{key}/file", max_bytes=max_bytes).content
