"""The catalog's SQLite engine shared with other processes (the CLI beside `serve`)."""

import sqlite3
import subprocess
import sys

from sqlalchemy import text

from common.retry import Retrier
from retrieval.upkeep.database import make_engine, sqlite_pragmas
from tests.demo_cache import copy_live_data

WRITE_AND_EXIT = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('UPDATE t SET v = 1'); c.commit()"
READ = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT v FROM t').fetchone()[0])"


def test_copying_a_catalog_this_process_has_open_loses_no_later_write(tmp_path):
    """A data directory copied while its catalog is open here (as the browser test copies the demo's), then
    another process writes and exits: this process's next write must reach the file others read."""
    source = tmp_path / "source"
    source.mkdir()
    database = source / "scholarloom.db"
    engine = make_engine(f"sqlite:///{database}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (v INTEGER)"))
        connection.execute(text("INSERT INTO t VALUES (0)"))
    copy_live_data(source, tmp_path / "copy")
    subprocess.run([sys.executable, "-c", WRITE_AND_EXIT, str(database)], check=True)
    with engine.begin() as connection:
        assert connection.execute(text("SELECT v FROM t")).scalar() == 1
        connection.execute(text("UPDATE t SET v = 2"))
    seen = subprocess.run([sys.executable, "-c", READ, str(database)], capture_output=True, text=True, check=True)
    assert seen.stdout.strip() == "2"
    copied = subprocess.run([sys.executable, "-c", READ, str(tmp_path / "copy" / "scholarloom.db")],
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert copied.stdout.strip() == "0"
    engine.dispose()


def test_a_new_database_another_opener_holds_turns_to_wal_once_it_is_free(tmp_path):
    """Turning a new file to WAL needs it alone: while another connection reads it the switch fails as "database is
    locked" (after the busy wait), and it is tried again (servers starting together on a new data directory; seen in
    tests/retrieval/test_schema.py's four openers)."""
    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM sqlite_master").fetchone()
    opener = sqlite3.connect(path, isolation_level=None)
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the holder lets go while the opener waits for its next try
        waits.append(seconds)
        holder.execute("COMMIT")

    sqlite_pragmas(opener, None, Retrier(retries=2, base=0.01, cap=0.01, max_wait=0, sleep=sleep), busy_ms=50)
    assert len(waits) == 1 and opener.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
