"""The cap on the Zotero libraries one user connects (`retrieval.library.zotero.MAX_LIBRARIES`) is counted and the
new row written under the user's lock: requests at once cannot each see room for one more."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import event

from retrieval.library.zotero import MAX_LIBRARIES, Libraries
from retrieval.upkeep.database import make_engine
from retrieval.upkeep.schema import migrate


@pytest.fixture
def libraries(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'zotero.db'}")
    migrate(engine)
    yield Libraries(engine)
    engine.dispose()


def test_libraries_connected_at_once_never_pass_the_cap(libraries):
    """Eight connections at once for a user who has all but three: three are made, five are told the cap. Each
    insert is slowed, so that without the lock every request would count before any of them wrote."""
    for n in range(MAX_LIBRARIES - 3):
        libraries.connect("uma", "group", str(n), "web", "sealed")

    @event.listens_for(libraries.engine, "before_cursor_execute")
    def slowly(connection, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO ZOTERO_LIBRARIES"):
            time.sleep(0.2)

    start, outcomes = threading.Barrier(8), []

    def connect(n: int) -> None:
        start.wait()
        try:
            libraries.connect("uma", "group", str(100 + n), "web", "sealed")
            outcomes.append("made")
        except ValueError as refused:
            outcomes.append("cap" if "the most" in str(refused) else str(refused))
        except Exception as exc:  # noqa: BLE001 (what the race gave, to be told in the assertion)
            outcomes.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=connect, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["cap"] * 5 + ["made"] * 3, outcomes
    assert len(libraries.of("uma")) == MAX_LIBRARIES
    # The same library connected again (a new key) is no new library: it is never refused.
    assert libraries.connect("uma", "group", "0", "web", "sealed again").sealed_key == "sealed again"
