"""Users, argon2id hashes, sign-in and throttling."""

import pytest
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from sqlmodel import Session, select

from auth.accounts import AccountError, add_user, authenticate, create_tables
from auth.models import Account
from auth.throttle import Throttle
from retrieval.catalog import make_engine


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'users.db'}")
    create_tables(engine)
    yield engine
    engine.dispose()


def test_add_and_authenticate(engine):
    add_user(engine, "alice", "correct horse battery")
    account = authenticate(engine, "alice", "correct horse battery")
    assert account and account.username == "alice" and account.password_hash.startswith("$argon2id$")
    assert authenticate(engine, "alice", "wrong password") is None
    assert authenticate(engine, "nobody", "correct horse battery") is None


def test_bad_names_and_passwords_are_refused(engine):
    with pytest.raises(AccountError):
        add_user(engine, "../etc", "long enough password")
    with pytest.raises(AccountError):
        add_user(engine, "bob", "short")
    add_user(engine, "bob", "long enough password")
    with pytest.raises(AccountError, match="already exists"):
        add_user(engine, "bob", "another long password")
    add_user(engine, "bob", "another long password", replace=True)
    assert authenticate(engine, "bob", "another long password")


def test_hash_upgraded_on_login(engine):
    weak = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=8 * 1024),)).hash("correct horse battery")
    with Session(engine) as session:
        session.add(Account(username="carol", password_hash=weak))
        session.commit()
    assert authenticate(engine, "carol", "correct horse battery")
    with Session(engine) as session:
        stored = session.exec(select(Account.password_hash).where(Account.username == "carol")).one()
    assert stored != weak and stored.startswith("$argon2id$")


def test_throttle_backs_off_then_lets_the_user_in():
    now = [0.0]
    throttle = Throttle(free_failures=5, base_delay=1.0, max_delay=60.0, clock=lambda: now[0])
    for _ in range(5):
        assert throttle.retry_after("user:alice") == 0
        throttle.failed("user:alice")
    throttle.failed("user:alice")
    assert throttle.retry_after("user:alice") == 1.0
    for _ in range(20):
        throttle.failed("user:alice")
    assert throttle.retry_after("user:alice") == 60.0  # capped
    now[0] += 61
    assert throttle.retry_after("user:alice") == 0
    throttle.succeeded("user:alice")
    assert throttle.retry_after("user:alice") == 0
