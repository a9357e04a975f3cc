"""`web.guards`: answers that show private data are kept by no cache, and the expensive public pages have a rate
per address, a ceiling on anonymous work at once and a minute's memory of anonymous answers."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.web.test_follow import app_with_users, client_for
from web.guards import ExpensivePages, PublicLimits, RateLimiter


@pytest.fixture(scope="module")
def app(demo):
    return app_with_users(demo, "fiona")


async def test_private_answers_are_kept_by_no_cache(app):
    """Signed in, search results may hold the reader's own uploads, /me/following its feed key, /admin/* anything:
    `private, no-store` and `Vary: Cookie` (nothing was sent, so a shared cache could hand one reader's page to the
    next). Signed out, the same pages vary by cookie and may be cached."""
    fiona, anonymous = client_for(app, "fiona"), client_for(app)
    for path, params in (("/search", {"q": "hindsight logging"}), ("/api/search", {"q": "hindsight logging"}),
                         ("/api/passages", {"q": "hindsight logging"}), ("/me/following", {}), ("/admin/jobs", {}),
                         ("/papers/2006.07357", {})):  # fmt: skip
        answer = await fiona.get(path, params=params)
        assert answer.headers["cache-control"] == "private, no-store", path
        assert "Cookie" in answer.headers["vary"], path
    public = await anonymous.get("/search", params={"q": "hindsight logging"})
    assert "Cookie" in public.headers["vary"] and "Accept" in public.headers["vary"]
    assert "private" not in public.headers.get("cache-control", "")
    feed = await anonymous.get("/me/feed.xml", params={"key": "nope"})
    assert "no-store" in feed.headers["cache-control"]  # under /me/: private whoever asks


async def test_an_address_that_asks_too_often_waits_and_anonymous_answers_are_kept(app):
    """Six expensive requests a minute here (the default is 60): the seventh from one address is a 429 with
    Retry-After while another address is served; an anonymous answer asked again within the minute is the one kept
    (not computed again, not counted) until the index is written."""
    writes = [0]
    limited = ExpensivePages(app, PublicLimits(per_minute=6), generation=lambda: writes[0])
    one = httpx.AsyncClient(transport=httpx.ASGITransport(app=limited, client=("198.51.100.1", 1)), base_url="http://t")
    other = httpx.AsyncClient(transport=httpx.ASGITransport(app=limited, client=("198.51.100.2", 1)),
                              base_url="http://t")  # fmt: skip
    first = await one.get("/search", params={"q": "hindsight logging"})
    for _ in range(3):
        again = await one.get("/search", params={"q": "hindsight logging"})
        assert again.status_code == 200 and again.text == first.text
    assert limited.computed == 1
    bogus = await one.get("/search", params={"q": "hindsight logging"}, headers={"Authorization": "Bearer made-up"})
    # A page reads no token: the kept answer, not counted against the address (the 429 below comes on time).
    assert bogus.text == first.text and limited.computed == 1
    writes[0] += 1  # the index was written (an ingest job): what was kept may be out of date
    assert (await one.get("/search", params={"q": "hindsight logging"})).status_code == 200
    assert limited.computed == 2
    for n in range(4):
        assert (await one.get("/api/search", params={"q": f"graph neural networks {n}"})).status_code == 200
    refused = await one.get("/compare", params={"ids": "2004.07180,1805.02262"})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "Too many searches" in refused.text
    assert (await other.get("/compare", params={"ids": "2004.07180,1805.02262"})).status_code == 200
    assert (await one.get("/search", params={"q": "hindsight logging"})).status_code == 200  # kept: still served
    assert (await one.get("/papers/2006.07357", follow_redirects=True)).status_code == 200  # a paper page: no ration


async def test_anonymous_work_waits_its_turn_and_a_turn_too_long_in_coming_is_a_503():
    """At most `at_once` anonymous answers are computed together; one that waits longer than `wait` is told the
    server is busy. A signed-in request is not held back (its reader is accountable, and its rate still counts)."""
    release = asyncio.Event()
    started = []

    async def slow(scope, receive, send):
        started.append(scope["path"])
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    guard = ExpensivePages(slow, PublicLimits(per_minute=0, at_once=1, wait=0.2))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=guard), base_url="http://t")
    first = asyncio.ensure_future(client.get("/search", params={"q": "a"}))
    while not started:
        await asyncio.sleep(0.01)
    busy = await client.get("/search", params={"q": "b"})
    assert busy.status_code == 503 and busy.headers["retry-after"]
    signed = asyncio.ensure_future(client.get("/search", params={"q": "c"}, headers={"cookie": "access_token=x"}))
    while len(started) < 2:
        await asyncio.sleep(0.01)
    release.set()
    assert (await first).status_code == 200 and (await signed).status_code == 200


def test_the_rate_limiter_refills_and_forgets_old_addresses():
    now = [0.0]
    limiter = RateLimiter(per_minute=2, keys=3, clock=lambda: now[0])
    assert limiter.take("a") == 0 and limiter.take("a") == 0
    assert limiter.take("a") == pytest.approx(30.0)  # one token back every 30 s
    now[0] = 30.0
    assert limiter.take("a") == 0
    for key in "bcd":
        limiter.take(key)
    assert "a" not in limiter._buckets and len(limiter._buckets) == 3
