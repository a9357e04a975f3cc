"""One-time values are spent in the database: once, whichever process asks, and forgotten a day later."""

from auth.accounts import create_tables
from auth.nonces import KEEP_SECONDS, spend
from retrieval.upkeep.database import make_engine


def test_a_nonce_is_spent_once_across_engines_and_forgotten_later(tmp_path):
    url = f"sqlite:///{tmp_path / 'n.db'}"
    first, second = make_engine(url), make_engine(url)  # two server processes on one database
    create_tables(first)
    assert spend(first, "abc", clock=lambda: 1000.0)
    assert not spend(second, "abc", clock=lambda: 1001.0)
    assert not spend(first, "", clock=lambda: 1001.0) and not spend(first, "x" * 65, clock=lambda: 1001.0)
    later = 1000.0 + KEEP_SECONDS + 1
    assert spend(second, "other", clock=lambda: later)  # spending anything purges what is past keeping
    assert spend(first, "abc", clock=lambda: later + 1)
    first.dispose()
    second.dispose()
