"""The database part on PostgreSQL: Debian's server started by the test run; the catalog loaded from the whole
demo corpus must equal the SQLite one, and users, follows and chat history behave the same. Also: the
database going away mid-conversation gives a clear answer, and the app recovers when it is back.

Skipped only where PostgreSQL is not installed and SCHOLARLOOM_REQUIRE_POSTGRES is not 1 (CI sets it).
"""

import os
import uuid

import pytest

from auth.accounts import add_user, create_tables, oauth_account, sign_in
from auth.follows import Follows
from auth.throttle import Throttle
from ingest.demo import demo_sources
from ingest.pipeline import finish_catalog, load_records
from ingest.report import Summary
from retrieval.catalog import Catalog
from retrieval.profiles import find_institution, find_researchers, researcher_profile
from scholarloom.history import LocalFiles, create_history_tables, make_history_layer
from tests.postgres import PostgresServer, binaries

if binaries() is None:
    if os.environ.get("SCHOLARLOOM_REQUIRE_POSTGRES") == "1":
        raise RuntimeError(
            "SCHOLARLOOM_REQUIRE_POSTGRES=1 but PostgreSQL is not installed (apt-get install postgresql)"
        )
    pytest.skip("Debian's PostgreSQL server is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def postgres():
    server = PostgresServer().start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def pg_catalog(postgres):
    """The whole demo corpus loaded into a fresh PostgreSQL database (catalog only; the vectors are not in SQL)."""
    catalog = Catalog(postgres.new_database())
    summary = Summary()
    for source in demo_sources():
        load_records(catalog, source.stage, source.read(), summary)
    finish_catalog(catalog)
    yield catalog, summary
    catalog.close()


def test_the_catalog_on_postgresql_equals_the_one_on_sqlite(pg_catalog, demo_load):
    catalog, summary = pg_catalog
    settings, sqlite_summary = demo_load
    sqlite = settings.catalog()
    assert catalog.counts() == sqlite.counts() and catalog.counts()["papers"] > 1700
    assert summary.counts["failed"] == sqlite_summary.counts["failed"]
    (bobby,) = [c.researcher for c in find_researchers(catalog, "Bobby Yan", limit=1)]
    (same,) = [c.researcher for c in find_researchers(sqlite, "Bobby Yan", limit=1)]
    ours, theirs = researcher_profile(catalog, bobby.id), researcher_profile(sqlite, same.id)
    assert [p.id for p in ours.papers.papers] == [p.id for p in theirs.papers.papers]
    assert [c.name for c in ours.coauthors] == [c.name for c in theirs.coauthors]
    assert find_institution(catalog, "MIT").institution.ror_id == find_institution(sqlite, "MIT").institution.ror_id
    assert catalog.papers(["2006.07357"])["2006.07357"].title == "Hindsight Logging for Model Training"


def test_a_rerun_on_postgresql_changes_nothing(pg_catalog):
    catalog, _ = pg_catalog
    before = catalog.counts()
    again = Summary()
    for source in demo_sources()[-3:]:
        load_records(catalog, source.stage, source.read(), again)
    assert catalog.counts() == before and again.counts["unchanged"] > 0 and not again.counts["added"]


def test_users_and_follows_on_postgresql(postgres):
    from retrieval.catalog import make_engine

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


async def test_chat_history_on_postgresql(postgres, tmp_path):
    """Chainlit's data layer with our schema on PostgreSQL (psycopg 3, async): write, read, list, refuse another
    owner, delete; no statement fails."""
    from chainlit.context import init_http_context
    from chainlit.types import Pagination, ThreadFilter
    from chainlit.user import User

    from retrieval.catalog import make_engine

    url = postgres.new_database()
    engine = make_engine(url)
    create_history_tables(engine)
    layer = make_history_layer(url, LocalFiles(tmp_path / "files"))
    init_http_context()
    alice = await layer.create_user(User(identifier="alice"))
    bob = await layer.create_user(User(identifier="bob"))
    thread = str(uuid.uuid4())
    await layer.update_thread(
        thread, name="Graphs", user_id=alice.id, metadata={"chat_profile": "papers", "history": ["not kept"]}
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
    from tests.assistant.test_agent import RecordingUI
    from tests.llm_server import text, tool_call

    catalog, _ = pg_catalog
    deps = ToolDeps(catalog, demo.index(), demo.embedder())
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
