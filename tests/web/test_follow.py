"""Following researchers: the chat's session cookie identifies the user on plain pages; a personal list
and a private RSS feed; no follow without a session, from another site, or with a forged token."""

from __future__ import annotations

import time

import httpx
import jwt
import pytest
from defusedxml import ElementTree
from pydantic import SecretStr

from auth.accounts import add_user
from auth.sessions import SESSION_VERSION
from retrieval.scholarly.researchers import find_researchers

SECRET = "s" * 48


def app_with_users(demo, *names: str):
    """The pages app (no chat) over the demo, signing sessions with SECRET, and these users."""
    from scholarloom.app import create_app

    before = demo.auth_secret
    demo.auth_secret = SecretStr(SECRET)
    try:
        application = create_app(demo, with_chat=False)
    finally:
        demo.auth_secret = before
    for name in names:
        add_user(demo.catalog().engine, name, "a long enough password", replace=True)
    return application


@pytest.fixture(scope="module")
def app(demo):
    return app_with_users(demo, "fiona", "gus")


def client_for(app, user: str | None = None, secret: str = SECRET) -> httpx.AsyncClient:
    """A client signed in as `user` with a token as sign-in makes it: carrying the account's session version now.
    (The demo's database is shared by the tests of one worker: a name another test gave a new password before
    has had its older sessions ended, and a token without the version would be refused.)"""
    cookies = {}
    if user:
        claims = {"identifier": user, "exp": int(time.time()) + 600,
                  "metadata": {SESSION_VERSION: _session_version(app, user)}}  # fmt: skip
        cookies["access_token"] = jwt.encode(claims, secret, "HS256")
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", cookies=cookies)


def _session_version(app, user: str) -> int:
    from sqlmodel import Session, select

    from auth.models import Account

    with Session(app.state.runtime.engine) as session:
        return session.exec(select(Account.session_version).where(Account.username == user)).first() or 0


@pytest.fixture(scope="module")
def bobby(demo) -> tuple[int, str]:
    (found,) = find_researchers(demo.catalog(), "Bobby Yan")
    return found.researcher.id, f"/researchers/{found.researcher.id}-bobby-yan"


async def test_following_a_researcher(app, bobby):
    number, path = bobby
    anonymous = client_for(app)
    assert "Sign in to follow" in (await anonymous.get(path)).text
    assert (await anonymous.post(f"/researchers/{number}/follow", headers={"origin": "http://test"})).status_code == 401
    forged = client_for(app, "fiona", secret="not-our-secret" * 4)
    assert "Sign in to follow" in (await forged.get(path)).text

    alice = client_for(app, "fiona")
    assert ">Follow</button>" in (await alice.get(path)).text
    other_site = await alice.post(f"/researchers/{number}/follow", headers={"origin": "http://evil.example"})
    assert other_site.status_code == 403
    done = await alice.post(f"/researchers/{number}/follow", headers={"origin": "http://test"})
    assert done.status_code == 303 and done.headers["location"] == path
    assert "Following ✓" in (await alice.get(path)).text

    mine = await alice.get("/me/following.md")
    assert "[Bobby Yan](" in mine.text and "Hindsight Logging for Model Training" in mine.text
    assert f"[Bobby Yan]({path}): 1 paper\n" in mine.text  # his count in the demo, from one grouped query
    feed_path = next(line for line in mine.text.splitlines() if "/me/feed.xml?key=" in line).split(": ", 1)[1]
    feed = ElementTree.fromstring((await anonymous.get(feed_path)).content)  # a feed reader has no cookie
    assert [i.findtext("title") for i in feed.findall("./channel/item")] == ["Hindsight Logging for Model Training"]
    assert (await anonymous.get("/me/feed.xml?key=wrong")).status_code == 404

    bob = client_for(app, "gus")
    assert "Bobby Yan" not in (await bob.get("/me/following.md")).text  # another user's list is their own
    assert (await anonymous.get("/me/following")).status_code == 303  # to the sign-in page

    undone = await alice.post(f"/researchers/{number}/unfollow", headers={"origin": "http://test"})
    assert undone.status_code == 303 and ">Follow</button>" in (await alice.get(path)).text


async def test_a_feed_address_can_be_replaced_and_closes_with_its_account(app, demo):
    import logging

    from sqlmodel import Session, select

    from auth.accounts import add_user
    from auth.middleware import HideFeedKeys
    from auth.models import Account

    add_user(demo.catalog().engine, "hal", "a long enough password", replace=True)
    hal, anonymous = client_for(app, "hal"), client_for(app)
    first = next(line for line in (await hal.get("/me/following.md")).text.splitlines() if "key=" in line)
    old_feed = first.split(": ", 1)[1]
    assert (await anonymous.get(old_feed)).status_code == 200
    assert (await hal.post("/me/feed-key", headers={"origin": "http://evil.example"})).status_code == 403
    assert (await anonymous.post("/me/feed-key", headers={"origin": "http://test"})).status_code == 401
    rotated = await hal.post("/me/feed-key", headers={"origin": "http://test"})
    assert rotated.status_code == 303 and (await anonymous.get(old_feed)).status_code == 404  # the old one is dead
    new_feed = next(line for line in (await hal.get("/me/following.md")).text.splitlines() if "key=" in line)
    new_feed = new_feed.split(": ", 1)[1]
    assert new_feed != old_feed and (await anonymous.get(new_feed)).status_code == 200
    with Session(demo.catalog().engine) as session:  # the account is disabled: its feed closes
        account = session.exec(select(Account).where(Account.username == "hal")).one()
        account.active = False
        session.add(account)
        session.commit()
    assert (await anonymous.get(new_feed)).status_code == 404
    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d',
                               ("1.2.3.4", "GET", new_feed, "1.1", 200), None)  # fmt: skip
    HideFeedKeys().filter(record)
    assert new_feed.split("key=")[1] not in record.getMessage() and "key=[hidden]" in record.getMessage()
