"""Personal API tokens (`auth.tokens`, `auth.middleware.BearerTokens`, `/me/tokens`, `/admin/tokens`): shown once,
stored as a digest and never logged; each use logged with its request id; revoked, expired or disabled tokens are
refused on the very next request; a read token cannot write; guessing is throttled per address; a token never opens
the account pages."""

from __future__ import annotations

import hashlib
import logging
import re
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from sqlalchemy import text

from auth.accounts import set_active, set_admin
from auth.tokens import create_token
from common.logs import Redact
from tests.web.test_follow import app_with_users, client_for

SAME_SITE = {"Origin": "http://test"}
TOKEN = re.compile(r"sl_[A-Za-z0-9_-]{43}")


@pytest.fixture(scope="module")
def app(demo):
    application = app_with_users(demo, "lena", "mo", "nadia")
    set_admin(demo.catalog().engine, "nadia", True)
    return application


def bearer(app, token: str, address: str) -> httpx.AsyncClient:
    """A script holding `token`, calling from `address` (each test its own: the throttle counts per address)."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://test", headers={"Authorization": f"Bearer {token}"})


class Seen(logging.Handler):
    """Every record of the app's loggers, as the server's log handler would write it (`Redact`), with its id."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[tuple[str, str]] = []
        self.raw: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.raw.append(record.getMessage())
        Redact().filter(record)
        self.lines.append((record.request_id, record.getMessage()))


@pytest.fixture
def seen():
    handler, root = Seen(), logging.getLogger()
    before = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield handler
    root.removeHandler(handler)
    root.setLevel(before)


async def test_a_token_is_shown_once_stored_as_a_digest_and_each_use_logged_without_it(app, demo, seen):
    lena = client_for(app, "lena")
    assert (await client_for(app).get("/me/tokens")).status_code == 303  # to the sign-in page
    foreign = await lena.post("/me/tokens", data={"name": "x"}, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    unnamed = await lena.post("/me/tokens", data={"name": "  ", "days": "30"}, headers=SAME_SITE)
    assert unnamed.status_code == 400 and "Give the token a name" in unnamed.text and not TOKEN.search(unnamed.text)

    made = await lena.post("/me/tokens", data={"name": "my <script> notebook", "days": "30", "scope": "read"},
                           headers=SAME_SITE)  # fmt: skip
    assert made.status_code == 201 and made.headers["cache-control"] == "private, no-store"
    (token,) = set(TOKEN.findall(made.text))
    assert "my &lt;script&gt; notebook" in made.text and "<script> notebook" not in made.text
    listing = await lena.get("/me/tokens.md")
    assert token not in listing.text and f"| my &lt;script&gt; notebook | {token[:11]}... | read |" in listing.text
    assert token not in (await client_for(app, "mo").get("/me/tokens")).text

    with demo.catalog().engine.connect() as connection:
        rows = [tuple(r) for r in connection.execute(text("SELECT * FROM api_tokens WHERE username = 'lena'"))]
    stored = " ".join(str(v) for row in rows for v in row)
    assert token not in stored and hashlib.sha256(token.encode()).hexdigest() in stored

    script = bearer(app, token, "198.51.100.1")
    library = await script.get("/api/library")
    assert library.status_code == 200 and library.json() == []
    assert library.headers["cache-control"] == "private, no-store"
    used = [line for rid, line in seen.lines if rid == library.headers["x-request-id"] and "api token" in line]
    assert used == [f"api token {token[:11]} of lena: GET /api/library"]
    assert not any(token in line for line in seen.raw)  # the token is in no record, before any redaction
    assert Redact().clean(f"curl -H 'Authorization: Bearer {token}'") == "curl -H 'Authorization: Bearer sl_[hidden]'"
    assert token not in Redact().clean(f"the token was {token}.")
    with demo.catalog().engine.connect() as connection:
        last = connection.execute(text("SELECT last_used_at FROM api_tokens WHERE prefix = :p"), {"p": token[:11]})
        assert last.scalar() is not None

    # A token opens /api/ and /mcp only: not the account pages, where a token could make more tokens.
    assert (await script.get("/me/tokens")).status_code == 303
    assert (await script.post("/me/tokens", data={"name": "more"}, headers=SAME_SITE)).status_code == 401


async def test_revoked_expired_and_disabled_tokens_are_refused_on_the_next_request(app, demo):
    engine = demo.catalog().engine
    row, token = create_token(engine, "mo", "laptop")
    script = bearer(app, token, "198.51.100.2")
    assert (await script.get("/api/search", params={"q": "dialog state tracking"})).status_code == 200
    assert (await client_for(app, "lena").post(f"/me/tokens/{row.id}/revoke", headers=SAME_SITE)).status_code == 404
    assert (await script.get("/api/library")).status_code == 200  # another user cannot revoke it
    revoked = await client_for(app, "mo").post(f"/me/tokens/{row.id}/revoke", headers=SAME_SITE)
    assert revoked.status_code == 303 and revoked.headers["location"] == "/me/tokens"
    refused = await script.get("/api/library")
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert refused.json() == {"detail": "This token is unknown, revoked or expired."}
    assert "revoked by mo" in (await client_for(app, "mo").get("/me/tokens.md")).text

    row, token = create_token(engine, "mo", "soon", days=1)
    script = bearer(app, token, "198.51.100.2")
    assert (await script.get("/api/library")).status_code == 200
    with engine.begin() as connection:
        connection.execute(text("UPDATE api_tokens SET expires_at = :past WHERE id = :id"),
                           {"past": datetime.now(timezone.utc) - timedelta(seconds=1), "id": row.id})  # fmt: skip
    assert (await script.get("/api/library")).status_code == 401
    assert "| expired |" in (await client_for(app, "mo").get("/me/tokens.md")).text

    # An admin sees every token and revokes any; nobody else learns the page exists.
    row, token = create_token(engine, "mo", "for the admin")
    script = bearer(app, token, "198.51.100.2")
    assert (await client_for(app, "mo").get("/admin/tokens")).status_code == 404
    every = await client_for(app, "nadia").get("/admin/tokens.md")
    assert every.status_code == 200 and f"| mo | for the admin | {token[:11]}... |" in every.text
    assert token not in every.text
    assert (await client_for(app, "nadia").post(f"/admin/tokens/{row.id}/revoke", headers=SAME_SITE)).status_code == 303
    assert (await script.get("/api/library")).status_code == 401

    # Disabling the account revokes its tokens: enabling it again does not bring them back.
    row, token = create_token(engine, "mo", "until disabled")
    script = bearer(app, token, "198.51.100.2")
    assert (await script.get("/api/library")).status_code == 200
    set_active(engine, "mo", False)
    assert (await script.get("/api/library")).status_code == 401
    set_active(engine, "mo", True)
    assert (await script.get("/api/library")).status_code == 401
    assert "revoked by an admin" in (await client_for(app, "mo").get("/me/tokens.md")).text


async def test_a_read_token_cannot_write_and_a_library_token_writes_only_there(app, demo):
    engine = demo.catalog().engine
    _, read = create_token(engine, "lena", "reader")
    _, writer = create_token(engine, "lena", "uploader", scope="library")
    pdf = {"file": ("x.pdf", b"<html>not a pdf</html>", "application/pdf")}
    refused = await bearer(app, read, "198.51.100.3").post("/api/library", files=pdf)
    assert refused.status_code == 403 and 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    assert "scope is 'read'" in refused.json()["detail"]
    reached = await bearer(app, writer, "198.51.100.3").post("/api/library", files=pdf)
    assert reached.status_code == 415 and "%PDF-" in reached.json()["detail"]  # the route's own check: it got there
    elsewhere = await bearer(app, writer, "198.51.100.3").post("/api/library/import", files=pdf)
    assert elsewhere.status_code != 403  # the library's import is the library's too
    assert (await bearer(app, writer, "198.51.100.3").delete("/api/nothing")).status_code == 403


async def test_unknown_tokens_are_throttled_per_address(app, demo):
    _, good = create_token(demo.catalog().engine, "lena", "good")
    guesses = [await bearer(app, "sl_" + "x" * 43, "198.51.100.4").get("/api/library") for _ in range(7)]
    assert [g.status_code for g in guesses[:6]] == [401] * 6  # five free, the sixth starts the back-off
    assert guesses[6].status_code == 429 and int(guesses[6].headers["retry-after"]) >= 1
    assert (await bearer(app, good, "198.51.100.4").get("/api/library")).status_code == 429  # not even looked at
    assert (await bearer(app, good, "198.51.100.5").get("/api/library")).status_code == 200  # other addresses are not
    malformed = await client_for(app).get("/api/library", headers={"Authorization": "Basic bGVuYTp4"})
    assert malformed.status_code == 401 and "Bearer" in malformed.headers["www-authenticate"]
    assert (await client_for(app).get("/", headers={"Authorization": "Bearer nonsense"})).status_code != 401


async def test_a_user_has_one_rate_across_their_tokens_and_past_it_waits():
    """Each user may make `SCHOLARLOOM_TOKEN_RATE` requests a minute, all their tokens together, in bursts of as many
    (the middleware as `create_app` wires it, its limit at 5 and its clock held still): five across two tokens of
    lena's, then a 429 with Retry-After on either (a second token is no second budget); mo's own token goes on, and
    lena's once her time has come."""
    from auth.middleware import BearerTokens
    from auth.tokens import TokenUse
    from web.guards import RateLimiter

    now = [1000.0]
    tokens = {"sl_one": TokenUse("lena", 1, "sl_one", "read"), "sl_two": TokenUse("lena", 2, "sl_two", "read"),
              "sl_mo": TokenUse("mo", 3, "sl_mo", "read")}  # fmt: skip

    async def api(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": scope["state"]["token_user"].encode()})

    guarded = BearerTokens(api, check=tokens.get, throttle=type("Never", (), {"retry_after": lambda s, k: 0})(),
                           address_key=str, limit=RateLimiter(5, clock=lambda: now[0]).take)  # fmt: skip

    async def call(token: str) -> httpx.Response:
        return await bearer(guarded, token, "198.51.100.9").post("/mcp")

    first = [await call(token) for token in ("sl_one", "sl_two", "sl_one", "sl_two", "sl_one")]
    assert [r.status_code for r in first] == [200] * 5 and first[1].text == "lena"
    over = [await call("sl_two"), await call("sl_one")]
    assert [r.status_code for r in over] == [429, 429]
    assert all(int(r.headers["retry-after"]) >= 12 for r in over)  # five a minute: one back every 12 s
    assert "try again in" in over[0].json()["detail"] and "share one rate" in over[0].json()["detail"]
    assert (await call("sl_mo")).status_code == 200  # another user's budget is their own
    now[0] += 13
    assert (await call("sl_two")).status_code == 200
    assert (await call("sl_one")).status_code == 429
