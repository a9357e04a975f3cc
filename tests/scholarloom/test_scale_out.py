"""Two `scholarloom serve` processes on one PostgreSQL database, as behind a load balancer (each with an embedded index
of its own here: a Qdrant server cannot run on this machine; docs/operators.md, "Several server processes", says what
that leaves unproved).
Whatever state one process keeps, the other agrees on: sessions and their ending, the sign-in throttle, one-time
nonces, cached catalog reads, the job queue (one of them runs a job, both show it) and what each one's model can do.

Skipped only where PostgreSQL is not installed and SCHOLARLOOM_REQUIRE_POSTGRES is not 1 (CI sets it).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from contextlib import ExitStack

import httpx
import pytest
from sqlmodel import select

from auth.accounts import add_user, address_key, clear_sign_in_failures, set_admin
from auth.throttle import Throttle
from harness.serve import served, tls
from jobs.queue import JobQueue, JobState
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Institution, Paper
from tests.chat_server import PASSWORD, ChatClient, sign_in
from tests.postgres import require_postgres

require_postgres()

FLOR = "2006.07357"


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory, llm_server, postgres):
    """(database URL, base URL of A, base URL of B): two servers on one new database with alice, the admin hana,
    one paper and one institution; one session secret, each its own data directory and embedded index."""
    url = postgres.new_database()
    catalog = Catalog(url)
    with catalog.session() as session:
        session.add(Paper(id=FLOR, title="Hindsight Logging for Model Training", abstract="Flor replays logging."))
        session.add(Institution(name="Massachusetts Institute of Technology", acronyms=["MIT"]))
        session.commit()
    add_user(catalog.engine, "alice", PASSWORD)
    add_user(catalog.engine, "hana", PASSWORD)
    set_admin(catalog.engine, "hana", True)
    catalog.engine.dispose()
    root = tmp_path_factory.mktemp("scale-out")
    shared = {"SCHOLARLOOM_DATABASE_URL": url, "SCHOLARLOOM_AUTH_SECRET": secrets.token_urlsafe(48),
              "SCHOLARLOOM_LLM": "openai/scripted", "SCHOLARLOOM_LLM_API_BASE": llm_server.api_base,
              "SCHOLARLOOM_LLM_API_KEY": "test-key"}  # fmt: skip
    llm_server.answer_probes = True
    try:
        with ExitStack() as stack:
            bases = [stack.enter_context(served(root / name, **shared))[0] for name in ("a", "b")]
            yield url, *bases
    finally:
        llm_server.answer_probes = False


def _page(base: str, path: str, token: str) -> httpx.Response:
    return httpx.get(base + path, cookies={"access_token": token}, follow_redirects=False, timeout=30, verify=tls())


def test_a_session_made_by_one_server_works_on_the_other_and_ends_on_both(two_servers):
    _url, a, b = two_servers
    token = asyncio.run(sign_in(a, "alice"))
    assert _page(b, "/me/following", token).status_code == 200
    ended = httpx.post(b + "/me/sign-out-everywhere", cookies={"access_token": token}, headers={"Origin": b})
    assert ended.status_code == 303
    for base in (a, b):  # the ended session is sent to sign in again, on either server
        again = _page(base, "/me/following", token)
        assert again.status_code == 303 and "/login" in again.headers["location"], (base, again.headers)


def test_wrong_passwords_on_one_server_slow_down_the_other(two_servers):
    url, a, b = two_servers
    catalog = Catalog(url)
    add_user(catalog.engine, "guessed", PASSWORD)
    throttle, address = Throttle(catalog.engine), address_key("127.0.0.1")  # what both servers write and read
    for _ in range(6):  # each round's guesses double the wait: one outlasts even a busy machine's next request
        for _ in range(8):
            wrong = httpx.post(a + "/chat/login", data={"username": "guessed", "password": "not the password"},
                               verify=tls())
            assert wrong.status_code != 200
        right = httpx.post(b + "/chat/login", data={"username": "guessed", "password": PASSWORD}, timeout=30,
                           verify=tls())
        if throttle.retry_after(address) > 0:  # A's wait still holds now, so it held when B was asked
            break
    else:
        pytest.fail("the guesses on A never earned a wait that outlasted one request to B")
    catalog.engine.dispose()
    assert right.status_code != 200 and "access_token" not in right.cookies
    catalog = Catalog(url)  # `scholarloom users unblock --all`, from a third process: both servers let it in again
    clear_sign_in_failures(catalog.engine)
    catalog.engine.dispose()
    for base in (a, b):
        assert httpx.post(base + "/chat/login", data={"username": "guessed", "password": PASSWORD}).status_code == 200


def test_a_one_time_nonce_spent_on_one_server_is_spent_on_both(two_servers):
    _url, a, b = two_servers
    value = httpx.get(a + f"/chat?paper={FLOR}").cookies["scholarloom_chat_paper"]

    async def opened(base: str) -> list[dict]:
        chat = ChatClient(base, "alice")
        await chat.connect(referer=base + "/chat/", cookie=f"scholarloom_chat_paper={value}")
        for _ in range(60):  # on_chat_start sends the introduction shortly after connecting
            if chat.messages("assistant_message"):
                break
            await asyncio.sleep(0.05)
        await chat.sio.disconnect()
        return chat.messages("assistant_message")

    first = asyncio.run(opened(b))
    assert first and first[0]["output"].startswith("This chat is about **[Hindsight Logging")
    assert asyncio.run(opened(a)) == []  # the cookie worked once, on whichever server


def test_a_catalog_write_from_anywhere_reaches_both_servers_cached_reads(two_servers):
    url, a, b = two_servers
    for base in (a, b):  # each server builds its affiliation resolver and keeps it
        assert httpx.get(base + "/api/institutions/Tech Institute of Cambridge").status_code == 404
    catalog = Catalog(url)  # a third process (an ingest run) merges an alias
    with catalog.session() as session:
        mit = session.exec(select(Institution)).one()
        mit.aliases = [*mit.aliases, "Tech Institute of Cambridge"]
        session.add(mit)
        session.commit()
    catalog.engine.dispose()
    for base in (a, b):
        found = httpx.get(base + "/api/institutions/Tech Institute of Cambridge")
        assert found.status_code == 200 and found.json()["name"] == "Massachusetts Institute of Technology", base


def test_one_server_runs_a_job_and_both_show_it_with_every_servers_model(two_servers, tmp_path):
    url, a, b = two_servers
    catalog = Catalog(url)
    queue = JobQueue(catalog.engine)
    job, _ = queue.submit("backup", {"destination": str(tmp_path / "backup.tar")}, asked_by="cli")
    deadline = time.monotonic() + 60
    while JobState(queue.get(job.id).state).live:
        assert time.monotonic() < deadline, queue.get(job.id)
        time.sleep(0.2)
    done = queue.get(job.id)
    assert done.state == JobState.DONE and (tmp_path / "backup.tar").is_file(), done.error
    workers = {w.name for w in queue.workers()}
    assert len(workers) == 2 and done.worker in workers and done.attempts == 1
    catalog.engine.dispose()
    token = asyncio.run(sign_in(a, "hana"))
    deadline = time.monotonic() + 30
    while True:  # each server asks its model at start, in the background, and keeps the answer in its row
        pages = [_page(base, "/admin/jobs.md", token).text for base in (a, b)]
        if all(f"{name}: openai/scripted: answers" in page for page in pages for name in workers):
            break
        assert time.monotonic() < deadline, pages
        time.sleep(0.5)
    for page in pages:
        assert "2 servers are taking jobs" in page and f"**{job.id}** backup, done" in page
