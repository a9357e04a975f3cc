"""PostgreSQL for the tests: the throwaway server (`harness.postgres`), and the rule for when its tests skip."""

from __future__ import annotations

import os

from harness.postgres import PostgresServer, binaries

__all__ = ["PostgresServer", "require_postgres"]


def require_postgres() -> None:
    """At a PostgreSQL test module's top: skip it without the server's binaries, unless CI
    (SCHOLARLOOM_REQUIRE_POSTGRES=1)."""
    import pytest

    if binaries() is None:
        if os.environ.get("SCHOLARLOOM_REQUIRE_POSTGRES") == "1":
            raise RuntimeError(
                "SCHOLARLOOM_REQUIRE_POSTGRES=1 but PostgreSQL is not installed (apt-get install postgresql)"
            )
        pytest.skip("Debian's PostgreSQL server is not installed", allow_module_level=True)
