"""The schema's history (retrieval/upkeep/schema.py, retrieval/upkeep/migrations/): a database the last release made
without migrations is adopted with every row, an older one gets the columns it lacks, the newest revision is exactly
what the models describe (a model change without a migration fails here), and processes starting together migrate once.

`tests/fixtures/schema/release-0.1.sql` is that release's database (two rows in every table), made by
`make_release_db.py` beside it from commit d698524. The same checks on PostgreSQL are in tests/test_database.py.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from retrieval.scholarly.catalog import Catalog
from retrieval.upkeep.database import make_engine
from retrieval.upkeep.schema import differences, head, migrate, revision
from scholarloom.cli.store import model_metadata

RELEASE = Path(__file__).parents[1] / "fixtures" / "schema" / "release-0.1.sql"
MODELS = model_metadata()  # what `scholarloom db revision` compares with, so a table it would miss fails here


def release_database(path: Path, *changes: str) -> Path:
    """The last release's database at `path`, with SQL `changes` applied after (to make it older)."""
    with closing(sqlite3.connect(path)) as connection:
        connection.executescript(RELEASE.read_text())
        for change in changes:
            connection.execute(change)
        connection.commit()
    return path


def rows(path: Path) -> dict[str, set[tuple]]:
    """Every row of every table (but Alembic's own), as {table: {(column, value) pairs}}."""
    with closing(sqlite3.connect(path)) as connection:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        found = {}
        for table in tables:
            if table == "alembic_version":
                continue
            cursor = connection.execute(f'SELECT * FROM "{table}"')
            names = [d[0] for d in cursor.description]
            found[table] = {tuple(zip(names, row)) for row in cursor}
        return found


def kept(before: dict[str, set[tuple]], after: dict[str, set[tuple]]) -> list[str]:
    """The rows of `before` missing from `after`, comparing the columns `before` had."""
    lost = []
    for table, old_rows in before.items():
        columns = {name for row in old_rows for name, _ in row}
        new_rows = {tuple(pair for pair in row if pair[0] in columns) for row in after.get(table, set())}
        lost += [f"{table}: {row}" for row in old_rows - new_rows]
    return lost


def test_the_last_releases_database_is_adopted_with_every_row(tmp_path):
    path = release_database(tmp_path / "release.db")
    before = rows(path)
    assert len(before) == 24 and all(len(table_rows) == 2 for table_rows in before.values())
    catalog = Catalog(f"sqlite:///{path}")  # what `serve` does first
    assert revision(catalog.engine).at_head and revision(catalog.engine).current == head()
    assert differences(catalog.engine, MODELS) == []
    catalog.engine.dispose()
    assert kept(before, rows(path)) == []


def test_an_older_database_gets_the_nullable_columns_it_lacks(tmp_path):
    path = release_database(
        tmp_path / "older.db",
        "DROP INDEX ix_jobs_key",
        'ALTER TABLE jobs DROP COLUMN "key"',
        "ALTER TABLE accounts DROP COLUMN session_version",
        "DROP TABLE feedbacks",
    )
    before = rows(path)
    engine = make_engine(f"sqlite:///{path}")
    assert migrate(engine).current is None
    assert differences(engine, MODELS) == []
    engine.dispose()
    after = rows(path)
    assert kept(before, after) == []
    assert {dict(row)["session_version"] for row in after["accounts"]} == {None}
    assert after["feedbacks"] == set()


def test_a_database_too_old_to_adopt_is_refused_and_left_as_it_was(tmp_path):
    path = release_database(tmp_path / "ancient.db", "ALTER TABLE papers DROP COLUMN title")
    before = rows(path)
    engine = make_engine(f"sqlite:///{path}")
    with pytest.raises(RuntimeError, match="papers lacks the required column title"):
        migrate(engine)
    assert revision(engine).current is None
    engine.dispose()
    assert rows(path) == before


def test_a_new_database_is_exactly_what_the_models_describe(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'new.db'}")
    assert migrate(engine).current is None
    assert revision(engine).at_head
    assert differences(engine, MODELS) == []
    assert migrate(engine).at_head  # the second time, nothing to do


def migrate_together(url: str, openers: int = 4) -> list:
    """`openers` engines on one new database migrating at the same moment: what each `migrate` returned."""
    start = threading.Barrier(openers)
    results: list = []

    def open_it():
        engine = make_engine(url)
        start.wait()
        try:
            results.append(migrate(engine))
        except Exception as exc:  # noqa: BLE001 - the test reports it
            results.append(exc)
        engine.dispose()

    threads = [threading.Thread(target=open_it) for _ in range(openers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_four_openers_starting_together_migrate_once(tmp_path):
    """Four openers of one new database at the same moment, as four server processes would be (each its own engine,
    connections and lock-file descriptor; threads here, so they start together): without the lock two of them
    create the same tables."""
    url = f"sqlite:///{tmp_path / 'together.db'}"
    results = migrate_together(url)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sum(1 for r in results if r.current is None) == 1  # one migrated; the others found it done
    assert differences(make_engine(url), MODELS) == []


def test_tables_made_from_todays_models_without_a_revision_are_adopted(tmp_path):
    """A database whose tables someone made from the models (`create_all`, as versions before migrations did, but
    with today's models): every revision finds its change already there and the database is stamped."""
    engine = make_engine(f"sqlite:///{tmp_path / 'made.db'}")
    for metadata in MODELS:
        metadata.create_all(engine)
    assert migrate(engine).current is None and revision(engine).at_head
    assert differences(engine, MODELS) == []
    engine.dispose()


def test_a_database_made_by_the_early_0012_is_repaired_by_0013(tmp_path):
    """Two commits of session 35 carried a 0012 without `saved_questions.cited` and the digests' table: a database
    they made is at 0012 and lacks both; 0013 makes them, and keeps the saved questions."""
    path = release_database(tmp_path / "early.db")
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    with closing(sqlite3.connect(path)) as connection:
        for change in ("ALTER TABLE question_changes DROP COLUMN judgement", "ALTER TABLE saved_questions DROP "
                       "COLUMN cited", "DROP TABLE digest_subscriptions", "UPDATE alembic_version SET "
                       "version_num = '0012'", "INSERT INTO saved_questions (owner, query, scope, seen, created_at) "
                       "VALUES ('jo', 'a question', 'all', '[]', '2026-12-05 10:00:00')"):  # fmt: skip
            connection.execute(change)
        connection.commit()
    engine = make_engine(f"sqlite:///{path}")
    assert migrate(engine).current == "0012"
    assert differences(engine, MODELS) == []
    engine.dispose()
    (question,) = rows(path)["saved_questions"]
    assert dict(question)["query"] == "a question" and dict(question)["cited"] == "{}"


def test_digest_addresses_stored_before_0015_are_checked(tmp_path):
    """An address stored before 0015 was never checked (one with an encoded word stopped every user's digests):
    one that passes the check keeps its digests (it was in use: confirmed when it was given); one that fails is
    switched off, with a notice its owner reads on their page."""
    from datetime import datetime, timezone

    from retrieval.library.digests import Digests

    path = release_database(tmp_path / "digests.db")
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    with closing(sqlite3.connect(path)) as connection:
        for change in ("ALTER TABLE digest_subscriptions DROP COLUMN confirmed_at", "ALTER TABLE digest_subscriptions "
                       "DROP COLUMN notice", "UPDATE alembic_version SET version_num = '0014'"):  # fmt: skip
            connection.execute(change)
        connection.executemany("INSERT INTO digest_subscriptions (owner, email, every, nonce, created_at) VALUES "
                               "(?, ?, 'day', ?, '2026-12-01 10:00:00.000000')",
                               [("jo", "jo@Example.ORG", "a" * 32), ("lee", "postmaster(@example.org", "c" * 32),
                                ("kim", "=?utf-8?q?a=0D=0Ab?=@example.org", "b" * 32)])  # fmt: skip
        connection.commit()
    engine = make_engine(f"sqlite:///{path}")
    assert migrate(engine).current == "0014"
    assert differences(engine, MODELS) == []
    digests = Digests(engine)
    (kept_row,) = digests.due(datetime.now(timezone.utc))
    assert kept_row.owner == "jo" and kept_row.email == "jo@example.org" and kept_row.notice is None
    assert kept_row.confirmed_at == datetime(2026, 12, 1, 10, tzinfo=timezone.utc)
    for owner in ("kim", "lee"):
        row = digests.of(owner)
        assert row.confirmed_at is None and "switched off" in row.notice
    engine.dispose()
