"""The scholarloom command as a user runs it."""

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from auth.accounts import authenticate
from ingest.demo import DEMO_DIR
from retrieval.scholarly.models import Paper
from scholarloom.cli import app
from scholarloom.settings import Settings

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHOLARLOOM_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_users_add_from_stdin(data_dir):
    result = runner.invoke(app, ["users", "add", "alice", "--password-stdin"], input="correct horse battery\n")
    assert result.exit_code == 0 and "user alice is ready" in result.output
    settings = Settings(data_dir=data_dir)
    assert authenticate(settings.catalog().engine, "alice", "correct horse battery")
    again = runner.invoke(app, ["users", "add", "alice", "--password-stdin"], input="another long one\n")
    assert again.exit_code == 1 and "already exists" in again.output
    short = runner.invoke(app, ["users", "add", "bob", "--password-stdin"], input="short\n")
    assert short.exit_code == 1 and "8 to 1024 characters" in short.output
    settings.close()


def test_serve_refuses_without_a_secret(data_dir):
    result = runner.invoke(app, ["serve", "--port", "8765"])
    assert result.exit_code == 1 and "SCHOLARLOOM_AUTH_SECRET" in result.output


def test_ingest_demo_reports_and_reruns(data_dir, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_DIR / "seed", corpus / "seed")
    shutil.copytree(DEMO_DIR / "arxiv_records", corpus / "arxiv_records")
    (corpus / "arxiv_metadata").mkdir()
    lines = (DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl").read_text().splitlines()[:2]
    (corpus / "arxiv_metadata" / "part.jsonl").write_text("\n".join([lines[0], "{broken", lines[1]]) + "\n")
    (corpus / "pdfs").mkdir()  # one paper with its full text
    shutil.copy(DEMO_DIR / "pdfs" / "2006.12719.pdf", corpus / "pdfs")
    pdf_lines = (DEMO_DIR / "pdfs" / "metadata.jsonl").read_text().splitlines()
    (corpus / "pdfs" / "metadata.jsonl").write_text(next(x for x in pdf_lines if '"2006.12719"' in x) + "\n")

    first = runner.invoke(app, ["ingest", "demo", "--source", str(corpus)])
    assert first.exit_code == 0, first.output
    # four papers' records and one PDF added; the passages are counted on the same line
    assert "demo corpus: added 5, updated 0, unchanged 0, skipped 0, failed 1, indexed 4, passages " in first.output
    passages = int(re.search(r"index points \d+ \(4 abstracts, \d+ windows, (\d+) passages\)", first.output)[1])
    assert passages > 10 and f"passages {passages}," in first.output and "papers 4" in first.output
    failures = [json.loads(line) for line in (data_dir / "ingest-failures.jsonl").read_text().splitlines()]
    assert failures == [{"source": "arxiv_snapshot", "key": "line 2", "reason": failures[0]["reason"]}]

    second = runner.invoke(app, ["ingest", "demo", "--source", str(corpus)])
    assert "added 0, updated 0, unchanged 5, skipped 0, failed 1, indexed 0" in second.output


def test_ingest_demo_with_a_missing_folder_says_so(data_dir, tmp_path):
    result = runner.invoke(app, ["ingest", "demo", "--source", str(tmp_path / "nowhere")])
    assert result.exit_code == 1 and "no demo corpus at" in result.output


def test_ingest_update_runs_every_step_and_remembers_where_it_stopped(data_dir, monkeypatch, scripted):
    from ingest.demo import DEMO_DIR
    from retrieval.library.watches import Watches
    from tests.ingest import oai_fixtures as oai
    from tests.replay import LocalServer

    raws = oai.real_records(3)
    page = oai.list_records([oai.record(r) for r in raws], None, 0, 3)
    empty = (DEMO_DIR / "openalex" / "api_cassettes" / "works_cursor_last_page_empty.json").read_bytes()
    server = LocalServer({"/oai": lambda _p: (200, page), "/works": lambda _p: (200, empty)})
    try:
        monkeypatch.setenv("SCHOLARLOOM_SOURCES__ARXIV_OAI_URL", f"{server.base}/oai")
        monkeypatch.setenv("SCHOLARLOOM_SOURCES__OPENALEX_URL", server.base)
        monkeypatch.setenv("SCHOLARLOOM_SOURCES__PRIVATE_HOSTS", json.dumps([server.host_port]))
        monkeypatch.setenv("SCHOLARLOOM_SOURCES__ARXIV_INTERVAL", "0")
        monkeypatch.setenv("SCHOLARLOOM_LLM", "openai/scripted")
        monkeypatch.setenv("SCHOLARLOOM_LLM_API_BASE", scripted.api_base)
        monkeypatch.setenv("SCHOLARLOOM_LLM_API_KEY", "k")
        answer = {"summary": "A paper about something measurable and precise.", "topics": ["physics"],
                  "paper_type": "theoretical", "research_field": "Physics"}  # fmt: skip
        scripted.enqueue(*[{"content": json.dumps(answer)}] * 3)
        watched = Settings(data_dir=data_dir)  # a saved question, run after the update here as `serve` would
        Watches(watched.catalog().engine).save("jo", "prompt diphoton production at the Tevatron", "all", [])
        watched.close()
        first = runner.invoke(app, ["ingest", "update", "--set", "physics", "--days", "400000"])
        assert first.exit_code == 0, first.output
        assert "1 saved question run, 1 with news" in first.output, first.output
        assert "added 3" in first.output and "indexed 3" in first.output and "analysed 3" in first.output
        assert "not found 3" in first.output  # OpenAlex was asked and knew none of them
        assert server.seen[0] == ("/oai", server.seen[0][1]) and server.seen[0][1]["set"] == "physics"
        newest = max(r["update_date"] for r in raws)
        server.seen.clear()
        second = runner.invoke(app, ["ingest", "update", "--set", "physics", "--no-analyse"])
        assert second.exit_code == 0, second.output
        assert f"from {newest}" in second.output and server.seen[0][1]["from"] == newest
        assert "unchanged 3" in second.output
    finally:
        server.stop()


def test_admins_are_made_and_unmade_from_the_command_line(data_dir):
    from auth.accounts import is_admin

    made = runner.invoke(app, ["users", "add", "carol", "--password-stdin", "--admin"], input="a long password\n")
    assert made.exit_code == 0 and "user carol is ready (admin)" in made.output
    runner.invoke(app, ["users", "add", "dan", "--password-stdin"], input="another long one\n")
    settings = Settings(data_dir=data_dir)
    engine = settings.catalog().engine
    assert is_admin(engine, "carol") and not is_admin(engine, "dan")
    assert "dan is an admin" in runner.invoke(app, ["users", "promote", "dan"]).output and is_admin(engine, "dan")
    assert runner.invoke(app, ["users", "promote", "carol", "--revoke"]).exit_code == 0 and not is_admin(engine, "carol")
    assert "no user 'erin'" in runner.invoke(app, ["users", "promote", "erin"]).output
    settings.close()


def test_jobs_are_listed_shown_cancelled_and_retried(data_dir):
    from jobs.queue import JobQueue, JobState

    settings = Settings(data_dir=data_dir)
    queue = JobQueue(settings.catalog().engine)
    assert "no jobs yet" in runner.invoke(app, ["jobs", "list"]).output
    waiting, _ = queue.submit("pdfs", {"paths": ["/tmp/x.pdf"]}, "cli")
    failed, _ = queue.submit("arxiv", {"query": "ti:x"}, "alice")
    queue.claim()
    queue.claim()
    queue.finish(failed.id, JobState.FAILED, {"added": 2}, error="arXiv answered 503\nmore")
    listed = runner.invoke(app, ["jobs", "list"]).output
    assert re.search(rf"{failed.id}\s+failed\s+arxiv .* by alice .*error: arXiv answered 503", listed), listed
    shown = runner.invoke(app, ["jobs", "show", str(failed.id)]).output
    assert "counts: added 2" in shown
    assert "(stops at its next step)" in runner.invoke(app, ["jobs", "cancel", str(waiting.id)]).output
    retried = runner.invoke(app, ["jobs", "retry", str(failed.id)])
    assert retried.exit_code == 0 and re.search(r"job \d+ queued", retried.output)
    assert runner.invoke(app, ["jobs", "retry", str(waiting.id)]).exit_code == 1  # still running: nothing to retry
    assert runner.invoke(app, ["jobs", "show", "999"]).exit_code == 1
    settings.close()


def test_ingest_while_another_command_holds_the_index_says_so(data_dir):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", "from scholarloom.settings import Settings; s = Settings(); s.index(); "
         "print('holding', flush=True); import time; time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "holding"
        result = runner.invoke(app, ["ingest", "pdfs", str(DEMO_DIR / "pdfs" / "2006.12719.pdf")])
    finally:
        holder.kill()
    assert result.exit_code == 1 and "No server is taking jobs" in result.output


def test_writing_the_vector_book_refuses_a_loaded_data_directory(data_dir, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_DIR / "seed", corpus / "seed")
    assert runner.invoke(app, ["ingest", "demo", "--source", str(corpus)]).exit_code == 0
    again = runner.invoke(app, ["ingest", "demo", "--source", str(corpus), "--write-vectors"])
    assert again.exit_code == 1 and "needs an empty data directory" in again.output
    assert not (corpus / "vectors").exists()


def test_a_users_feed_key_is_replaced_from_the_command_line(data_dir):
    from auth.follows import Follows

    runner.invoke(app, ["users", "add", "fay", "--password-stdin"], input="a long password\n")
    settings = Settings(data_dir=data_dir)
    follows = Follows(settings.catalog().engine)
    old = follows.feed_key("fay")
    result = runner.invoke(app, ["users", "new-feed-key", "fay"])
    assert result.exit_code == 0 and follows.feed_key("fay") != old and follows.feed_key("fay") in result.output
    assert follows.user_for_key(old) is None and follows.user_for_key(follows.feed_key("fay")) == "fay"
    settings.close()


def test_db_upgrade_adopts_the_last_releases_database_and_db_current_says_where_it_stands(data_dir):
    from tests.retrieval.test_schema import release_database

    data_dir.mkdir(parents=True)
    release_database(data_dir / "scholarloom.db")
    before = runner.invoke(app, ["db", "current"])
    assert before.exit_code == 0
    assert "database revision: none; newest: 0016 (run `scholarloom db upgrade`)" in before.output
    upgrade = runner.invoke(app, ["db", "upgrade"])
    assert upgrade.exit_code == 0 and "upgraded the database from no revision to 0016" in upgrade.output
    again = runner.invoke(app, ["db", "upgrade"])
    assert again.exit_code == 0 and "the database is at the newest revision (0016)" in again.output
    after = runner.invoke(app, ["db", "current"])
    assert "database revision: 0016; newest: 0016 (up to date)" in after.output
    settings = Settings(data_dir=data_dir)
    with settings.catalog().session() as session:  # the release's rows, read through today's models
        assert session.get(Paper, "papers.id 1").title == "papers.title 1"
    settings.close()


def test_serve_puts_what_start_up_made_out_of_the_collectors_sight(data_dir, monkeypatch):
    """A full collection walked every object start-up had made (the app, its libraries): 140 ms of a request now
    and then at a million papers (a sitemap part's 10,000 rows set one off). `serve` freezes them before it
    listens."""
    import functools
    import gc

    import uvicorn

    from scholarloom import app as composition

    seen = []
    monkeypatch.setenv("SCHOLARLOOM_AUTH_SECRET", "s" * 40)
    # (without the chat: Chainlit, once loaded, keeps its root for the process, and other tests here mount theirs)
    monkeypatch.setattr(composition, "create_app", functools.partial(composition.create_app, with_chat=False))
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: seen.append(gc.get_freeze_count()))
    try:
        result = runner.invoke(app, ["serve", "--port", "8765"])
    finally:
        gc.unfreeze()
    assert result.exit_code == 0, result.output
    assert seen and seen[0] > 10_000  # the app's objects, frozen when it began to listen
