"""The saved-question store (`retrieval.library.watches`): its quota holds when one user's saves come at once."""

from __future__ import annotations

import time

from sqlalchemy import event

from retrieval.library.watches import MAX_QUESTIONS, Watches
from retrieval.scholarly.catalog import Catalog
from tests.jobs.test_queue import at_once


def test_the_quota_of_saved_questions_holds_when_saves_race(tmp_path):
    """Twelve saves at once with room for one keep one. Each reads the count, then inserts: without the user's lock
    all twelve read the room free (the pause after the count makes sure they all read it before any inserts)."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'watches.db'}")
    watches = Watches(catalog.engine)
    for n in range(MAX_QUESTIONS - 1):
        watches.save("jo", f"question {n}", "all", [])

    @event.listens_for(catalog.engine, "after_cursor_execute")
    def pause(_connection, _cursor, statement, *_):
        if statement.lstrip().upper().startswith("SELECT COUNT") and "saved_questions" in statement:
            time.sleep(0.1)

    results = at_once(12, lambda n: watches.save("jo", f"raced {n}", "all", []))
    refused = [r for r in results if isinstance(r, ValueError)]
    assert len(refused) == 11 and f"You keep {MAX_QUESTIONS} questions" in str(refused[0]), results
    assert len(watches.of("jo")) == MAX_QUESTIONS
    catalog.close()
