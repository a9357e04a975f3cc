"""The database part on PostgreSQL: Debian's server started by the test run; the catalog loaded from the whole
demo corpus must equal the SQLite one, and users, follows and chat history behave the same. Also: the
database going away mid-conversation gives a clear answer, and the app recovers when it is back.

Skipped only where PostgreSQL is not installed and SCHOLARLOOM_REQUIRE_POSTGRES is not 1 (CI sets it).
"""

import uuid

import pytest
from sqlmodel import select

from auth.accounts import add_user, create_tables, oauth_account, sign_in
from auth.follows import Follows
from auth.throttle import Throttle
from chatui.files import LocalFiles
from chatui.tables import create_history_tables
from ingest.demo import demo_sources
from ingest.pipeline import finish_catalog, load_records
from ingest.report import Summary
from retrieval.archive import Archive
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.institutions import look_up_institution as find_institution
from retrieval.scholarly.models import Citation, Paper, Researcher
from retrieval.scholarly.researchers import find_researchers, researcher_profile
from tests.postgres import require_postgres

require_postgres()


# The big files of the corpus, left out of the PostgreSQL pass: their records go through the same code as the rest.
LEFT_OUT = ("demo:arxiv_metadata/", "demo:ror/ror_v2_records_sample.jsonl", "demo:openalex/works_sample.json")


def _subset():
    """Every demo source but the arXiv metadata snapshots, ROR's v2 sample, OpenAlex's works sample and all but the
    first arXiv API page: ROR v1 institutions (MIT among them) and OpenAlex's, the researchers, the seed paper with
    its OpenAlex works, references and citations (both malformed works too), and 100 arXiv papers. The same
    parsers, identity matching and merges as the whole corpus, loaded in seconds (146 papers, 1,597 citations)."""
    return [
        source
        for source in demo_sources()
        if not source.stage.startswith(LEFT_OUT)
        and not (source.stage.startswith("demo:arxiv_api_atom/") and "start000" not in source.stage)
    ]


def _load(catalog: Catalog) -> Summary:
    summary = Summary()
    for source in _subset():
        load_records(catalog, source.stage, source.read(), summary)
    finish_catalog(catalog)
    return summary


@pytest.fixture(scope="module")
def pg_catalog(postgres):
    """The demo subset loaded into a fresh PostgreSQL database (catalog only; the vectors are not in SQL)."""
    catalog = Catalog(postgres.new_database())
    summary = _load(catalog)
    yield catalog, summary
    catalog.close()


@pytest.fixture(scope="module")
def sqlite_catalog(tmp_path_factory):
    """The same subset loaded the same way into SQLite, to compare with."""
    catalog = Catalog(f"sqlite:///{tmp_path_factory.mktemp('subset') / 'catalog.db'}")
    summary = _load(catalog)
    yield catalog, summary
    catalog.close()


def test_the_catalog_on_postgresql_equals_the_one_on_sqlite(pg_catalog, sqlite_catalog):
    catalog, summary = pg_catalog
    sqlite, sqlite_summary = sqlite_catalog
    assert catalog.counts() == sqlite.counts() and catalog.counts()["papers"] > 100
    assert catalog.counts()["citations"] > 1000 and catalog.counts()["institutions"] > 400
    assert summary.counts == sqlite_summary.counts and summary.failures == sqlite_summary.failures
    assert {f.key for f in summary.failures} == {"W4234567890", "W2963341956"}  # the two malformed works
    (bobby,) = [c.researcher for c in find_researchers(catalog, "Bobby Yan", limit=1)]
    (same,) = [c.researcher for c in find_researchers(sqlite, "Bobby Yan", limit=1)]
    ours, theirs = researcher_profile(catalog, bobby.id), researcher_profile(sqlite, same.id)
    assert [p.id for p in ours.papers.papers] == [p.id for p in theirs.papers.papers]
    assert [c.name for c in ours.coauthors] == [c.name for c in theirs.coauthors] and ours.coauthors
    assert find_institution(catalog, "MIT").institution.ror_id == find_institution(sqlite, "MIT").institution.ror_id
    assert catalog.papers(["2006.07357"])["2006.07357"].title == "Hindsight Logging for Model Training"
    with catalog.session() as pg, sqlite.session() as lite:  # the same rows, not only as many
        for model, key in ((Paper, Paper.id), (Researcher, Researcher.name_key), (Citation, Citation.citing_id)):
            assert _rows(pg, model, key) == _rows(lite, model, key), model.__name__


def _rows(session, model, key) -> list[tuple]:
    """Every row as comparable values: surrogate ids left out (two loads number rows alike, but need not), dates
    read as UTC whichever way the database hands them back."""
    from datetime import datetime, timezone

    from sqlmodel import select

    def value(v):
        if isinstance(v, datetime):
            return (v.astimezone(timezone.utc) if v.tzinfo else v.replace(tzinfo=timezone.utc)).isoformat()
        return repr(v)

    columns = [c for c in model.__table__.columns.keys() if c != "id" or model is Paper]
    return sorted(tuple(value(getattr(r, c)) for c in columns) for r in session.exec(select(model).order_by(key)))


def test_a_words_researchers_on_postgresql_come_most_papers_first(postgres):
    """The terms' (term, papers) index and the counts kept beside the terms, as on SQLite."""
    from tests.retrieval.test_researcher_terms import words_researchers_most_papers_first

    words_researchers_most_papers_first(postgres.new_database())


def test_a_rerun_on_postgresql_changes_nothing(pg_catalog):
    catalog, _ = pg_catalog
    before = catalog.counts()
    again = Summary()
    for source in _subset()[-3:]:
        load_records(catalog, source.stage, source.read(), again)
    assert catalog.counts() == before and again.counts["unchanged"] > 0 and not again.counts["added"]


def test_users_and_follows_on_postgresql(postgres):
    from retrieval.upkeep.database import make_engine

    engine = make_engine(postgres.new_database())
    create_tables(engine)
    add_user(engine, "alice", "right password 1")
    throttle = Throttle(engine)
    assert sign_in(engine, throttle, "alice", "right password 1", "127.0.0.1").username == "alice"
    assert sign_in(engine, throttle, "alice", "wrong password", "127.0.0.1") is None
    made = oauth_account(engine, "github", "583231", "octocat", allow_signup=True)
    assert oauth_account(engine, "github", "583231", "renamed", allow_signup=False).id == made.id
    follows = Follows(engine)
    follows.follow("alice", 7)
    follows.follow("alice", 7)
    assert follows.followed("alice") == [7] and follows.followed("bob") == []
    engine.dispose()


def test_a_users_shares_hold_when_raced_on_postgresql(postgres, tmp_path):
    """The storage quota and the daily share, raced by twenty and thirty requests at once: an advisory lock per user
    does on PostgreSQL what SQLite's write lock does."""
    from jobs.queue import JobQueue
    from retrieval.library.uploads import Uploads
    from tests.jobs.test_queue import daily_share_holds_when_raced
    from tests.retrieval.test_uploads import quota_holds_when_raced

    catalog = Catalog(postgres.new_database())
    quota_holds_when_raced(Uploads(catalog.engine, tmp_path), JobQueue(catalog.engine))
    daily_share_holds_when_raced(catalog.engine)
    catalog.close()


async def test_chat_history_on_postgresql(server, postgres, tmp_path):
    """Chainlit's data layer with our schema on PostgreSQL (psycopg 3, async): write, read, list, refuse another
    owner, delete; no statement fails."""
    from chainlit.context import init_http_context
    from chainlit.types import Pagination, ThreadFilter
    from chainlit.user import User

    from chatui.layer import HistoryLayer
    from retrieval.upkeep.database import make_engine

    url = postgres.new_database()
    engine = make_engine(url)
    create_history_tables(engine)
    layer = HistoryLayer(url, LocalFiles(tmp_path / "files"))
    init_http_context()
    alice = await layer.create_user(User(identifier="alice"))
    bob = await layer.create_user(User(identifier="bob"))
    thread = str(uuid.uuid4())
    await layer.update_thread(
        thread, name="Graphs", user_id=alice.id, metadata={"chat_profile": "papers", "conversation": {"not": "kept"}}
    )
    step = {
        "id": str(uuid.uuid4()),
        "threadId": thread,
        "name": "alice",
        "type": "user_message",
        "output": "What is new on graphs?",
        "streaming": False,
        "metadata": {"turn": [{"role": "tool", "content": "x"}]},
        "tags": ["a"],
        "createdAt": "2026-11-30T10:00:00Z",
    }
    await layer.create_step(step)
    stored = await layer.get_thread(thread)
    assert stored["userIdentifier"] == "alice" and stored["metadata"] == {"chat_profile": "papers"}
    assert stored["steps"][0]["output"] == "What is new on graphs?" and stored["steps"][0]["metadata"]["turn"]
    listed = await layer.list_threads(Pagination(first=10), ThreadFilter(userId=alice.id))
    assert [t["id"] for t in listed.data] == [thread]
    assert (await layer.list_threads(Pagination(first=10), ThreadFilter(userId=bob.id))).data == []
    await layer.update_thread(thread, user_id=bob.id)  # refused: a thread never changes owner
    assert layer.failures == ["refused a change of a thread's owner"]
    assert (await layer.get_thread(thread))["userIdentifier"] == "alice"
    await layer.delete_thread(thread)
    assert await layer.get_thread(thread) is None
    assert layer.failures == ["refused a change of a thread's owner"]
    await layer.engine.dispose()
    engine.dispose()


async def test_the_database_going_away_mid_conversation(postgres, pg_catalog, demo, scripted):
    """Stop PostgreSQL between two questions: the tool says the catalog is unavailable and the model is told to
    say so; retrieval-only mode says "Search is unavailable right now". Start it again and the same objects
    answer, with no restart."""
    from assistant.agent import Agent
    from assistant.llm import LLMConfig
    from assistant.retrieval_only import SEARCH_UNAVAILABLE
    from assistant.tools import ToolDeps
    from harness.llm_server import text, tool_call
    from tests.assistant.test_agent import RecordingUI

    catalog, _ = pg_catalog
    deps = ToolDeps(Archive(catalog, demo.index(), demo.embedder()))
    agent = Agent(LLMConfig(model="openai/scripted", api_base=scripted.api_base, api_key="k", timeout=20))
    scripted.enqueue(tool_call("get_paper", paper_id="2006.07357"), text("Search is unavailable right now."))
    postgres.stop()
    try:
        ui = RecordingUI()
        await agent.turn(deps, [], "What is 2006.07357 about?", ui)
        (step,) = ui.steps
        assert step["output"].startswith("Error: get_paper is unavailable right now: the catalog database did not")
        assert "search is unavailable" in scripted.requests[-1]["messages"][-1]["content"]
        ui = RecordingUI()
        await Agent(None).turn(deps, [], "graph neural networks", ui)
        assert ui.final == SEARCH_UNAVAILABLE
    finally:
        postgres.start()
    scripted.enqueue(tool_call("get_paper", paper_id="2006.07357"), text("Back [1]."))
    ui = RecordingUI()
    outcome = await agent.turn(deps, [], "And now?", ui)
    assert "Hindsight Logging for Model Training" in ui.steps[0]["output"] and outcome.error is None
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "graph neural networks", ui)
    assert ui.final != SEARCH_UNAVAILABLE and ui.cards


def test_the_last_releases_schema_on_postgresql_is_adopted_with_every_row(postgres, tmp_path):
    """The release made its PostgreSQL tables from its models, the ones the baseline froze; its rows are those of
    the SQLite fixture (tests/fixtures/schema/), one column removed to make it older still. Every row survives."""
    import importlib

    import sqlalchemy as sa

    from retrieval.upkeep.database import make_engine
    from retrieval.upkeep.schema import differences, migrate, revision
    from tests.retrieval.test_schema import MODELS, release_database

    baseline = importlib.import_module("retrieval.upkeep.migrations.versions.0001_baseline")
    engine = make_engine(postgres.new_database())
    baseline.META.create_all(engine)
    source = make_engine(f"sqlite:///{release_database(tmp_path / 'release.db')}")
    with source.connect() as reading, engine.begin() as writing:
        for table in baseline.META.sorted_tables:
            writing.execute(table.insert(), [dict(row._mapping) for row in reading.execute(table.select())])
        writing.execute(sa.text("ALTER TABLE accounts DROP COLUMN session_version"))

    reflected = sa.MetaData()
    reflected.reflect(engine)
    tables = reflected.sorted_tables
    with engine.connect() as connection:
        before = {t.name: {repr(tuple(r)) for r in connection.execute(t.select())} for t in tables}
    assert len(before) == 24 and all(len(table_rows) == 2 for table_rows in before.values())
    assert migrate(engine).current is None and revision(engine).at_head
    assert differences(engine, MODELS) == []
    with engine.connect() as connection:  # the columns the release had, row by row
        after = {t.name: {repr(tuple(r)) for r in connection.execute(sa.select(*t.columns))} for t in tables}
        assert set(connection.execute(sa.text("SELECT session_version FROM accounts")).scalars()) == {None}
    assert after == before
    engine.dispose()
    source.dispose()


def test_servers_starting_together_on_postgresql_migrate_once(postgres):
    from retrieval.upkeep.database import make_engine
    from retrieval.upkeep.schema import differences
    from tests.retrieval.test_schema import MODELS, migrate_together

    url = postgres.new_database()
    results = migrate_together(url)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sum(1 for r in results if r.current is None) == 1
    engine = make_engine(url)
    assert differences(engine, MODELS) == []
    engine.dispose()


def test_a_database_too_old_to_adopt_on_postgresql_is_refused_with_the_reason(postgres):
    """The revision fails inside its transaction: the reason reaches the operator (not PostgreSQL's "transaction
    aborted" from releasing the lock), nothing is stamped, and the next opener is not left waiting on the lock."""
    import importlib

    import sqlalchemy as sa

    from retrieval.upkeep.database import make_engine
    from retrieval.upkeep.schema import ADVISORY_KEY, migrate, revision

    baseline = importlib.import_module("retrieval.upkeep.migrations.versions.0001_baseline")
    url = postgres.new_database()
    engine = make_engine(url)
    baseline.META.create_all(engine)
    with engine.begin() as connection:
        connection.execute(sa.text("ALTER TABLE papers DROP COLUMN title"))
    with pytest.raises(RuntimeError, match="papers lacks the required column title"):
        migrate(engine)
    other = make_engine(url)  # another process's connection: the lock is free
    with other.connect() as connection:
        assert connection.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": ADVISORY_KEY}).scalar() is True
    assert revision(other).current is None
    other.dispose()
    engine.dispose()


def _listing_catalog(url: str) -> Catalog:
    """Papers that meet every edge of the newest-first order: several on one date (the id breaks the tie), one with
    a date but no year, undated ones with and without a year, two categories interleaved."""
    from datetime import datetime, timedelta, timezone

    catalog = Catalog(url)
    start = datetime(2020, 1, 1, tzinfo=timezone.utc)
    with catalog.session() as session:
        for n in range(40):
            day = start + timedelta(days=n // 3)  # three papers a day
            session.add(Paper(id=f"2001.{n:05d}", title=f"Paper {n}", published=day, year=day.year,
                              primary_category="cs.CL" if n % 3 else "cs.LG"))  # fmt: skip
        session.add(Paper(id="2001.99999", title="Dated, no year", published=start + timedelta(days=5),
                          primary_category="cs.CL"))  # fmt: skip
        for n, year in enumerate([2019, None, 2019, None, 2021, 2018, None]):
            session.add(Paper(id=f"undated-{n}", title=f"Undated {n}", year=year, primary_category="cs.CL"))
        session.commit()
    return catalog


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_listing_walked_by_its_cursors_is_the_newest_first_order(database, postgres, tmp_path):
    """The pager's links are keyset cursors: walking them older from the first page, or newer from the last, meets
    every paper once, in the database's own newest-first order (the order the numbered pages read), on both
    databases, whatever their ties and missing dates and years; each page's way back is the page before it."""
    from retrieval.scholarly.paging import listing_page, newest_first

    url = postgres.new_database() if database == "postgresql" else f"sqlite:///{tmp_path / 'listing.db'}"
    catalog = _listing_catalog(url)
    try:
        with catalog.session() as session:
            for category in (None, "cs.CL"):
                query = select(Paper.id).order_by(*newest_first())
                expected = list(session.exec(query.where(Paper.primary_category == category) if category else query))
                numbered = [listing_page(session, category, 4, len(expected), page=n).papers
                            for n in range(1, (len(expected) + 3) // 4 + 1)]  # fmt: skip
                assert [p.id for page in numbered for p in page] == expected
                pages = [listing_page(session, category, 4, len(expected))]
                while pages[-1].older:
                    pages.append(listing_page(session, category, 4, len(expected), after=pages[-1].older))
                assert [p.id for page in pages for p in page.papers] == expected, category
                assert pages[0].newer is None and all(page.page == 0 for page in pages[1:])
                for before, page in zip(pages, pages[1:]):  # each page's "newer" link is the page before it
                    back = listing_page(session, category, 4, len(expected), before=page.newer)
                    assert [p.id for p in back.papers] == [p.id for p in before.papers], category
                walked_back = [pages[-1]]
                while walked_back[-1].newer:
                    walked_back.append(listing_page(session, category, 4, len(expected), before=walked_back[-1].newer))
                assert [p.id for page in reversed(walked_back) for p in page.papers] == expected, category
            unknown = listing_page(session, None, 4, 48, after="no-such-paper")
            assert unknown.page == 1 and unknown.newer is None
    finally:
        catalog.close()
