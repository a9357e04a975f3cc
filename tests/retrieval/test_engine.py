"""The catalog's SQLite engine shared with other processes (the CLI beside `serve`)."""

import subprocess
import sys

from sqlalchemy import text

from retrieval.engine import make_engine
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
