"""A throwaway PostgreSQL server for a test run or a benchmark: Debian's binaries, a fresh cluster in a temporary
directory, listening on 127.0.0.1 only, stopped and removed at the end (started by the tests and `bench/`, so CI
needs only the package). The tests' skip rule is `tests/postgres.py`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def binaries() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


class PostgresServer:
    def __init__(self) -> None:
        self.bin = binaries()
        if self.bin is None:
            raise FileNotFoundError("PostgreSQL is not installed (apt-get install postgresql)")
        self.root = Path(tempfile.mkdtemp(prefix="scholarloom-pg-"))
        self.data = self.root / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        # PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user.
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.root, "postgres")
        os.chmod(self.root, 0o755)

    def _run(self, *command: str) -> None:
        subprocess.run([*self.as_user, *command], check=True, capture_output=True, text=True)

    def start(self) -> PostgresServer:
        if not self.data.exists():
            self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=200"
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start"
        )
        return self

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
