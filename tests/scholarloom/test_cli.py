"""The scholarloom command as a user runs it."""

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from auth.accounts import authenticate
from ingest.demo import DEMO_DIR
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
        first = runner.invoke(app, ["ingest", "update", "--set", "physics", "--days", "400000"])
        assert first.exit_code == 0, first.output
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
