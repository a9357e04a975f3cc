"""One arXiv paper on request: record by id, OpenAlex (knows nothing here), index, full text; an unknown id ends
with a clear message and stores nothing."""

import pytest

from ingest.ondemand import NotOnArxiv, fetch_paper
from ingest.report import Summary
from ingest.writer import Writer
from retrieval.vectors.index import Filters
from tests.ingest.ondemand_fixtures import ASKED, recorded_routes
from tests.ingest.test_http import make_client
from tests.replay import Replay

API = "https://export.arxiv.org/api/query"


def test_a_paper_is_fetched_by_its_id_alone(empty_instance):
    from ingest.harvest.openalex import OpenAlex

    settings = empty_instance
    replay = recorded_routes(Replay())
    summary = Summary()
    with make_client(replay) as client:
        openalex = OpenAlex(client, "https://api.openalex.org", "ops@example.org", None)
        paper_id = fetch_paper(Writer.of(settings.archive()), client, ASKED, summary,
                               api_url=API, openalex=openalex)  # fmt: skip
    assert paper_id == ASKED
    paper = settings.catalog().papers([ASKED])[ASKED]
    assert paper.title and paper.abstract and paper.arxiv_id == ASKED
    assert settings.index().count(Filters(kinds=("abstract",), paper_ids=(ASKED,))) == 1
    assert settings.index().count(Filters(kinds=("passage",), paper_ids=(ASKED,))) > 10
    asked = [(r.url.host, r.url.path, dict(r.url.params)) for r in replay.requests]
    assert asked[0] == ("export.arxiv.org", "/api/query", {"id_list": ASKED, "max_results": "1"})
    assert ("arxiv.org", f"/pdf/{ASKED}", {}) in asked  # every address built from the id
    assert summary.counts["passages"] > 10 and summary.counts["indexed"] == 1


def test_an_id_arxiv_does_not_have_ends_clearly(empty_instance):
    settings = empty_instance
    with make_client(recorded_routes(Replay())) as client, pytest.raises(NotOnArxiv, match="arXiv has no paper"):
        fetch_paper(Writer.of(settings.archive()), client, "2512.99999", Summary(),
                    api_url=API)  # fmt: skip
    assert settings.catalog().counts()["papers"] == 0


def test_a_record_that_could_not_be_stored_fails_the_request(empty_instance, monkeypatch):
    """Before, the job ended "done" without the paper (the chat then said "could not be fetched: done")."""
    from ingest import ondemand
    from ingest.ondemand import NotStored
    from ingest.report import Failure

    def nothing_stored(_catalog, stage, records, summary, *args, **kwargs):
        summary.fail(Failure(stage, records[0].id, "could not be stored: OperationalError: database is locked"))

    monkeypatch.setattr(ondemand, "load_records", nothing_stored)
    settings = empty_instance
    with make_client(recorded_routes(Replay())) as client, pytest.raises(NotStored, match="database is locked"):
        fetch_paper(Writer.of(settings.archive()), client, ASKED, Summary(), api_url=API)


def test_another_writer_between_a_records_reads_and_its_write_loses_nothing(empty_instance):
    """SQLite: a transaction that starts by reading (SAVEPOINT, SELECTs) and finds that another connection wrote
    since then fails at once with "database is locked", busy timeout or not. The job worker's heartbeat and the
    chat's history write at any moment; here one writes exactly there."""
    import threading

    from sqlalchemy import event, text

    from ingest.parsers.arxiv import parse_atom
    from ingest.pipeline import load_records
    from tests.ingest.ondemand_fixtures import id_list_answer

    catalog = empty_instance.catalog()
    with catalog.engine.begin() as connection:
        connection.execute(text("CREATE TABLE heartbeat (at INTEGER)"))
    other = threading.Thread(target=lambda: _beat(catalog.engine))
    fired = []

    def between_read_and_write(_conn, _cursor, statement, *_args):
        if statement.startswith("INSERT INTO papers") and not fired:
            fired.append(True)
            other.start()
            other.join(1.5)  # it commits at once unless this transaction already holds the write lock

    event.listen(catalog.engine, "before_cursor_execute", between_read_and_write)
    summary = Summary()
    load_records(catalog, "test", list(parse_atom(id_list_answer(ASKED))), summary)
    event.remove(catalog.engine, "before_cursor_execute", between_read_and_write)
    other.join(15)
    assert fired and summary.failures == [] and summary.counts["added"] == 1
    assert catalog.resolve_paper_id(ASKED) == ASKED
    with catalog.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM heartbeat")).scalar() == 1  # and it waited its turn


def _beat(engine) -> None:
    from sqlalchemy import text

    with engine.begin() as connection:
        connection.execute(text("INSERT INTO heartbeat VALUES (1)"))
