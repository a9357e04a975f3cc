"""Zotero's API as `ingest.harvest.zotero` reads it (shapes: `tests/fixtures/zotero/README.md`): a group library's
name and its key's access, a key of another user, listings longer than a page, a library that changes while it is
read, a library with more items than a sync reads (known from its first page), and the local API (no key)."""

from __future__ import annotations

import json

import pytest

from ingest.harvest.zotero import Zotero, ZoteroChanged, ZoteroRefused, ZoteroTooLarge
from ingest.http import PoliteClient
from tests.replay import Replay, public_resolver

API = "api.zotero.org"
KEYS = {"key": "x" * 24, "userID": 4567890, "username": "ada",
        "access": {"user": {"library": True, "files": True}, "groups": {"123456": {"library": True, "write": False}}}}


def _client(replay: Replay, hosts=(API,), private=()) -> PoliteClient:
    return PoliteClient(user_agent="ScholarLoom-test/0", allowed_hosts=list(hosts), transport=replay.transport(),
                        resolve=public_resolver, sleep=lambda _s: None, private_hosts=list(private))  # fmt: skip


def _items(keys: list[str]) -> bytes:
    return json.dumps([{"key": k, "version": 3, "data": {"key": k, "itemType": "journalArticle", "title": k}}
                       for k in keys]).encode()  # fmt: skip


def test_a_groups_name_and_a_key_that_is_not_its_users():
    replay = Replay()
    replay.add("GET", API, "/keys/current", KEYS)
    replay.add("GET", API, "/groups/123456", {"id": 123456, "version": 9, "data": {"id": 123456, "name": "Dialog lab"}})
    assert Zotero(_client(replay), "https://api.zotero.org", "/groups/123456", "x" * 24).name() == "Dialog lab"
    with pytest.raises(ZoteroRefused, match="may not read the group 999"):
        Zotero(_client(replay), "https://api.zotero.org", "/groups/999", "x" * 24).name()
    with pytest.raises(ZoteroRefused, match="belongs to Zotero user 4567890, not to 42"):
        Zotero(_client(replay), "https://api.zotero.org", "/users/42", "x" * 24).name()
    assert Zotero(_client(replay), "https://api.zotero.org", "/users/4567890", "x" * 24).name() == "ada"


def test_listings_longer_than_a_page_and_a_library_that_changes_while_read():
    replay = Replay()
    first, second = [f"A{n:07d}" for n in range(100)], [f"B{n:07d}" for n in range(30)]
    headers = {"Last-Modified-Version": "20", "Total-Results": "130"}
    replay.add("GET", API, "/users/1/collections", b"[]", headers={"Last-Modified-Version": "20", "Total-Results": "0"})
    replay.add("GET", API, "/users/1/items", _items(first), when=lambda r: r.url.params["start"] == "0",
               headers=headers, times=1)  # fmt: skip
    replay.add("GET", API, "/users/1/items", _items(second), when=lambda r: r.url.params["start"] == "100",
               headers=headers, times=1)  # fmt: skip
    changes = Zotero(_client(replay), "https://api.zotero.org", "/users/1", "k").changes(0)
    assert changes.version == 20 and [i["key"] for i in changes.items] == first + second
    assert [r.url.params["limit"] for r in replay.requests[1:]] == ["100", "100"]

    replay.add("GET", API, "/users/1/items", _items(first), when=lambda r: r.url.params["start"] == "0",
               headers=headers, times=1)  # fmt: skip
    replay.add("GET", API, "/users/1/items", _items(second), when=lambda r: r.url.params["start"] == "100",
               headers={**headers, "Last-Modified-Version": "21"}, times=1)  # fmt: skip
    with pytest.raises(ZoteroChanged, match="version 20, then 21"):
        Zotero(_client(replay), "https://api.zotero.org", "/users/1", "k").changes(0)


def test_a_library_over_the_most_items_is_refused_after_its_first_page():
    """`Total-Results` of the first page of items counts every item (attachments and notes too): over `most`, no
    further page is asked for."""
    replay = Replay()
    replay.add("GET", API, "/users/1/collections", b"[]", headers={"Last-Modified-Version": "20", "Total-Results": "0"})
    replay.add("GET", API, "/users/1/items", _items([f"A{n:07d}" for n in range(100)]),
               headers={"Last-Modified-Version": "20", "Total-Results": "2001"})  # fmt: skip
    with pytest.raises(ZoteroTooLarge) as large:
        Zotero(_client(replay), "https://api.zotero.org", "/users/1", "k").changes(0, most=2000)
    assert large.value.total == 2001
    assert [r.url.params["start"] for r in replay.requests if r.url.path == "/users/1/items"] == ["0"]


def test_the_local_api_needs_no_key():
    replay = Replay()
    replay.add("GET", "localhost", "/api/users/0/collections", b"[]",
               headers={"Last-Modified-Version": "5", "Total-Results": "0"})  # fmt: skip
    client = _client(replay, hosts=("localhost",), private=("localhost:23119",))
    local = Zotero(client, "http://localhost:23119/api", "/users/0", None)
    assert local.name() == "Zotero desktop (local API)"
    sent = replay.requests[0].headers
    assert "Zotero-API-Key" not in sent and sent["Zotero-API-Version"] == "3"
