"""Users, argon2id hashes, sign-in and throttling."""

import pytest
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from sqlmodel import Session, select

from auth.accounts import AccountError, add_user, address_key, authenticate, create_tables, sign_in
from auth.models import Account
from auth.throttle import Throttle
from retrieval.upkeep.database import make_engine


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


def test_throttle_backs_off_then_lets_the_user_in(engine):
    now = [0.0]
    throttle = Throttle(engine, free_failures=5, base_delay=1.0, max_delay=60.0, clock=lambda: now[0])
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


def test_processes_sharing_the_database_count_the_same_guesses(engine):
    """Two server processes (two Throttles on one database): guesses spread over both still add up, and a
    restart (a new Throttle) remembers them."""
    now = [1000.0]
    first, second = (Throttle(engine, free_failures=4, clock=lambda: now[0]) for _ in range(2))
    for n in range(6):
        (first if n % 2 else second).failed("user:alice", "addr:203.0.113.9")
    assert first.retry_after("user:alice") == second.retry_after("addr:203.0.113.9") == 2.0  # 6 = 4 free + 2
    assert Throttle(engine, clock=lambda: now[0]).retry_after("user:alice") == 2.0
    second.succeeded("user:alice")
    assert first.retry_after("user:alice") == 0 and first.retry_after("addr:203.0.113.9") == 2.0


def test_an_admin_lifts_a_back_off(engine, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from auth.accounts import clear_sign_in_failures
    from scholarloom.cli import app

    throttle = Throttle(engine)
    for _ in range(7):
        throttle.failed("user:alice", "addr:203.0.113.9")
    assert throttle.retry_after("user:alice") > 0
    assert clear_sign_in_failures(engine, "Alice") == 1  # names are matched as sign-in matches them
    assert throttle.retry_after("user:alice") == 0 and throttle.retry_after("addr:203.0.113.9") > 0
    # the same from the command line, on a data directory
    monkeypatch.setenv("SCHOLARLOOM_DATA_DIR", str(tmp_path / "data"))
    from scholarloom.settings import Settings

    other = Throttle(Settings().catalog().engine)
    for _ in range(7):
        other.failed("addr:198.51.100.1")
    assert other.retry_after("addr:198.51.100.1") > 0
    assert CliRunner().invoke(app, ["users", "unblock"]).exit_code == 1  # a name or --all
    result = CliRunner().invoke(app, ["users", "unblock", "--all"])
    assert result.exit_code == 0 and "forgot the failed sign-ins of 1 name or address" in result.output
    assert other.retry_after("addr:198.51.100.1") == 0


def test_old_failures_are_forgotten_so_the_table_stays_small(engine):
    from sqlalchemy import func, select

    from auth.models import SignInFailures

    now = [0.0]
    throttle = Throttle(engine, free_failures=5, max_delay=900.0, forget_after=3600.0, clock=lambda: now[0])
    for n in range(1000):  # a spray from a thousand addresses, one guess each
        throttle.failed(f"addr:198.51.100.{n}")
    for _ in range(8):
        throttle.failed("user:alice")
    assert throttle.retry_after("user:alice") == 4.0
    now[0] += 3601
    throttle.failed("addr:192.0.2.1")  # the next failure sweeps out what is over and older than an hour
    with engine.connect() as connection:
        left = connection.execute(select(SignInFailures.key)).scalars().all()
    assert sorted(left) == ["addr:192.0.2.1"]
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(SignInFailures)).scalar() == 1


def test_a_thousand_guesses_get_nowhere_and_the_user_still_gets_in(engine):
    """One attacker address, 1,000 guesses at one account, the right password among them: none succeeds, because
    after 5 free failures every attempt during the back-off fails unseen. After it, the real user signs in."""
    add_user(engine, "alice", "right password 1")
    now = [0.0]
    throttle = Throttle(engine, free_failures=5, base_delay=1.0, max_delay=900.0, clock=lambda: now[0])
    guesses = [f"guess {n:04d}" for n in range(1000)]
    guesses[500] = "right password 1"
    results = []
    for guess in guesses:
        results.append(sign_in(engine, throttle, "alice", guess, "203.0.113.9"))
        now[0] += 0.5  # two guesses a second
    assert not any(results)
    # The real user, from their own address, waits out the account's back-off (at most 15 minutes) and gets in.
    now[0] += throttle.retry_after("user:alice")
    assert sign_in(engine, throttle, "alice", "right password 1", "198.51.100.7") is not None


def test_unknown_user_and_wrong_password_do_the_same_work(engine, monkeypatch):
    """The same answer (None) and the same work: an unknown name verifies a dummy argon2id hash made with the
    same parameters as real ones (the seconds are measured by bench/signin_timing.py, not asserted here)."""
    from pwdlib import PasswordHash

    from auth.passwords import dummy_hash

    add_user(engine, "alice", "right password 1")
    verified: list[str] = []
    real_verify, real_update = PasswordHash.verify, PasswordHash.verify_and_update
    monkeypatch.setattr(PasswordHash, "verify", lambda self, pw, h: verified.append(h) or real_verify(self, pw, h))
    monkeypatch.setattr(
        PasswordHash, "verify_and_update", lambda self, pw, h: verified.append(h) or real_update(self, pw, h)
    )
    assert authenticate(engine, "alice", "wrong password") is None
    assert authenticate(engine, "nobody-here", "wrong password") is None
    assert authenticate(engine, "nobody-here", "x" * 5000) is None  # an overlong password too
    with Session(engine) as session:
        stored = session.exec(select(Account).where(Account.username == "alice")).one().password_hash
    assert verified == [stored, dummy_hash(), dummy_hash()]
    assert dummy_hash().split("$")[1:4] == stored.split("$")[1:4]  # argon2id, version, m/t/p parameters


def test_guesses_from_one_ipv6_64_count_as_one_address(engine):
    """A subscriber owns a whole /64: rotating through it must not give each guess a fresh address."""
    add_user(engine, "olga", "the right password")
    now = [5000.0]
    throttle = Throttle(engine, free_failures=3, base_delay=60.0, clock=lambda: now[0])
    for n in range(8):  # eight guesses at eight names, each from another address of one /64
        sign_in(engine, throttle, f"someone{n}", "guess", f"2001:db8:7:9::{n + 1:x}")
    assert throttle.retry_after(address_key("2001:db8:7:9:ffff::1")) > 0  # the whole /64 waits
    assert throttle.retry_after(address_key("2001:db8:7:a::1")) == 0  # the next /64 does not
    assert address_key("203.0.113.9") == "addr:203.0.113.9" == address_key("::ffff:203.0.113.9")


def _plain_check(monkeypatch, engine, checked: list):
    """authenticate without argon2id's 0.1 s per guess (these tests count what the throttle lets through)."""
    from auth import accounts

    alice = add_user(engine, "alice", "right password 1")
    def check(_engine, _username, password):
        checked.append(1)
        return alice if password == "right password 1" else None

    monkeypatch.setattr(accounts, "authenticate", check)


def test_an_outsider_cannot_lock_a_user_out(engine, monkeypatch):
    """A day of targeted lockout: wrong guesses as fast as the back-off allows until it is at its 15 minutes, then
    one every 15 minutes, keeping the account backing off. The user, from their own address, tries 30 s after
    each guess and signs in every time, after a typo too."""
    _plain_check(monkeypatch, engine, [])
    now = [0.0]
    throttle = Throttle(engine, free_failures=5, base_delay=1.0, max_delay=900.0, clock=lambda: now[0])
    for n in range(40):  # the first two hours: the attacker guesses as soon as it may, until the waits are 15 min
        now[0] += throttle.retry_after("addr:203.0.113.9")
        sign_in(engine, throttle, "alice", f"burst {n}", "203.0.113.9")
    signed_in, tries = 0, 0
    while now[0] < 86_400:
        now[0] += throttle.retry_after("addr:203.0.113.9")  # the attacker guesses as soon as it may
        sign_in(engine, throttle, "alice", "one more guess", "203.0.113.9")
        now[0] += 30
        if tries == 0:  # the lock the attacker wants: the account is backing off when the user comes
            assert throttle.retry_after("user:alice") > 0
        if tries % 8 == 0:  # now and then the user mistypes first, and types it again
            assert sign_in(engine, throttle, "alice", "rihgt password 1", "198.51.100.7") is None
            now[0] += 10
        tries += 1
        signed_in += sign_in(engine, throttle, "alice", "right password 1", "198.51.100.7") is not None
    assert tries >= 60 and signed_in == tries


def test_guesses_from_many_addresses_are_few_per_address(engine, monkeypatch):
    """The price of the rule above, measured: 200 addresses (each its own /64) guessing 20 times each at one
    account get their passwords checked at most EVIDENCE times each once the account backs off (after the
    account's free failures)."""
    from auth.accounts import EVIDENCE

    checked: list = []
    _plain_check(monkeypatch, engine, checked)
    now = [0.0]
    throttle = Throttle(engine, free_failures=5, base_delay=1.0, max_delay=900.0, clock=lambda: now[0])
    for address in range(200):
        for guess in range(20):
            assert sign_in(engine, throttle, "alice", f"guess {guess}", f"2001:db8:{address:x}::1") is None
            now[0] += 0.05
    assert len(checked) <= 200 * EVIDENCE + throttle.free_failures


def test_disable_enable_and_sign_out_are_single_updates(engine):
    """A run of `users disable` then `users enable` once ended with the account still disabled: the enable had
    read the row, found it "already active" (a stale read), and written only the session version. Each change is
    now one UPDATE that sets what it means, with nothing read before it."""
    from sqlalchemy import event

    from auth.accounts import end_sessions, set_active

    add_user(engine, "alice", "right password 1")
    statements: list[str] = []
    listener = lambda _c, _cur, statement, *_a: statements.append(" ".join(statement.split()[:2]))  # noqa: E731
    event.listen(engine, "before_cursor_execute", listener)
    for change, tokens in ((lambda: set_active(engine, "alice", False), ["UPDATE api_tokens"]),
                           (lambda: set_active(engine, "alice", True), []),
                           (lambda: end_sessions(engine, "alice"), [])):  # fmt: skip
        statements.clear()
        change()
        # (disabling also revokes the account's API tokens: one UPDATE of their table, after the account's)
        assert [s for s in statements if s.startswith("UPDATE")] == ["UPDATE accounts", *tokens], statements
        assert statements[0] == "UPDATE accounts", statements
    event.remove(engine, "before_cursor_execute", listener)
    add_user(engine, "alice", "a new password 1", replace=True)
    with Session(engine) as session:
        account = session.exec(select(Account).where(Account.username == "alice")).one()
    assert account.active and account.session_version == 4
    assert authenticate(engine, "alice", "a new password 1") is not None
