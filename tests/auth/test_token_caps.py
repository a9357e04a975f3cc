"""The live-token cap (`auth.tokens.MAX_TOKENS`) is counted and written under the user's lock, and making or revoking
tokens keeps to the user's write rate (`/me/tokens`)."""

from __future__ import annotations

import threading
import time

import pytest
from sqlmodel import Session, select

from auth.accounts import add_user, create_tables
from auth.models import ApiToken
from auth.tokens import MAX_TOKENS, TokenError, create_token, live
from retrieval.upkeep.database import make_engine
from tests.web.test_follow import app_with_users, client_for

SAME_SITE = {"Origin": "http://test"}


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'users.db'}")
    create_tables(engine)
    add_user(engine, "ines", "a long enough password")
    yield engine
    engine.dispose()


def test_tokens_made_at_once_never_pass_the_cap_and_none_fails_for_the_race(engine, monkeypatch):
    """Twelve requests at once for a user who holds all but five: five tokens are made, seven are told the cap, and
    none fails for the race. The token's making (between the count and the insert) is slowed so that every request
    counts before any inserts, unless the lock keeps them apart."""
    import auth.tokens

    for n in range(MAX_TOKENS - 5):
        create_token(engine, "ines", f"held {n}")
    drawn = auth.tokens.secrets.token_urlsafe

    def slowly(size: int) -> str:
        time.sleep(0.2)
        return drawn(size)

    monkeypatch.setattr(auth.tokens.secrets, "token_urlsafe", slowly)
    start, outcomes = threading.Barrier(12), []

    def make(n: int) -> None:
        start.wait()
        try:
            create_token(engine, "ines", f"raced {n}")
            outcomes.append("made")
        except TokenError:
            outcomes.append("cap")
        except Exception as exc:  # noqa: BLE001 (what the race gave, to be told in the assertion)
            outcomes.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=make, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["cap"] * 7 + ["made"] * 5, outcomes
    with Session(engine) as session:
        assert sum(live(t) for t in session.exec(select(ApiToken))) == MAX_TOKENS


async def test_making_and_revoking_tokens_keep_to_the_write_rate(demo):
    """Thirty writes a minute (`WebDeps.writes`), made and revoked together: the next of either is a 429 with
    Retry-After and the reason in words, and nothing is made or revoked by it."""
    from auth.tokens import tokens_of

    app = app_with_users(demo, "oskar")
    engine, oskar = demo.catalog().engine, client_for(app, "oskar")
    made = [await oskar.post("/me/tokens", data={"name": f"script {n}", "scope": "read"}, headers=SAME_SITE)
            for n in range(MAX_TOKENS)]  # fmt: skip
    assert [a.status_code for a in made] == [201] * MAX_TOKENS
    ids = [t.id for t in tokens_of(engine, "oskar")]
    revoked = [await oskar.post(f"/me/tokens/{i}/revoke", headers=SAME_SITE) for i in ids[:10]]
    assert [a.status_code for a in revoked] == [303] * 10
    refused = await oskar.post("/me/tokens", data={"name": "one more", "scope": "read"}, headers=SAME_SITE)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert "too many tokens this minute" in refused.text
    again = await oskar.post(f"/me/tokens/{ids[10]}/revoke", headers=SAME_SITE)
    assert again.status_code == 429 and "too many tokens this minute" in again.text
    held = tokens_of(engine, "oskar")
    assert len(held) == MAX_TOKENS and sum(live(t) for t in held) == MAX_TOKENS - 10
