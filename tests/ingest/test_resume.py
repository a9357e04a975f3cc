"""An ingest killed with SIGKILL, twice (mid-harvest and mid-indexing), then rerun: every paper once, none
lost, and the index holding exactly the expected points (two pages of 15, cut from the first recorded page of
100, indexed in steps of 10 papers (SCHOLARLOOM_INDEX_BATCH): enough to be killed between pages and between
embedding steps). The arXiv API is a local server replaying the recorded Atom entries; the command is the real
`scholarloom ingest arxiv` in its own process."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from harness.serve import child_environment
from ingest.demo import DEMO_DIR
from ingest.writer import abstract_reading
from retrieval.vectors.index import Filters
from scholarloom.settings import Settings

ATOM = DEMO_DIR / "arxiv_api_atom"
PAPERS, PAGE, STEP = 30, 15, 10
RECORDED = 100  # entries per recorded page
# Built, not recorded: the page after the last one served, saying the result set ends at PAPERS entries.
END = (
    b'<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" '
    b'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"><opensearch:totalResults>%d'
    b"</opensearch:totalResults></feed>" % PAPERS
)


class ArxivReplay(BaseHTTPRequestHandler):
    gate = threading.Event()
    hold_at: int | None = None
    starts: list[int] = []

    def do_GET(self):  # noqa: N802 (http.server's naming)
        params = parse_qs(urlsplit(self.path).query)
        start = int(params["start"][0])
        type(self).starts.append(start)
        if start == type(self).hold_at:
            type(self).gate.wait(60)  # the client is killed while it waits here
        body = _page(start, int(params["max_results"][0])) if start < PAPERS else END
        self.send_response(200)
        self.send_header("Content-Type", "application/atom+xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _page(start: int, size: int) -> bytes:
    """Entries start..start+size of the recorded result set, as one Atom page (the recorded page's head, so the
    result set's total is arXiv's own)."""
    recorded = (ATOM / f"query_cs_start{start // RECORDED * RECORDED:03d}_max100.xml").read_bytes()
    head, *entries = recorded.split(b"<entry>")
    entries[-1] = entries[-1].replace(b"</feed>", b"")
    offset = start % RECORDED
    chosen = entries[offset : offset + size]
    assert len(chosen) == size, "the test asks for whole pages inside one recorded page"
    return head + b"".join(b"<entry>" + e for e in chosen) + b"</feed>\n"


@pytest.fixture
def arxiv_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ArxivReplay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    ArxivReplay.gate.set()
    server.shutdown()


def ledger_count(db, stage: str) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=10) as connection:
        try:
            return connection.execute("SELECT count(*) FROM ingest_ledger WHERE stage = ?", (stage,)).fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def run_until(command, env, condition, timeout=240.0):
    """Start the command; SIGKILL it as soon as condition() holds. Returns True if it was killed."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if condition():
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.1)
    output = process.communicate(timeout=30)[0].decode(errors="replace")
    assert process.returncode == 0, output
    return False


def test_sigkill_mid_harvest_and_mid_index_then_rerun(tmp_path, arxiv_server):
    data = tmp_path / "data"
    env = child_environment(data) | {
        "SCHOLARLOOM_SOURCES__ARXIV_API_URL": f"http://127.0.0.1:{arxiv_server}/api/query",
        "SCHOLARLOOM_SOURCES__PRIVATE_HOSTS": json.dumps([f"127.0.0.1:{arxiv_server}"]),
        "SCHOLARLOOM_SOURCES__ARXIV_INTERVAL": "0",
        "SCHOLARLOOM_INDEX_BATCH": str(STEP),
    }
    command = [sys.executable, "-m", "scholarloom.cli", "ingest", "arxiv", "--category", "cs.AI"]
    command += ["--page-size", str(PAGE)]
    db = data / "scholarloom.db"

    # 1. Killed while waiting for the second page: the first is stored, with the offset that follows it.
    ArxivReplay.hold_at, ArxivReplay.starts = PAGE, []
    assert run_until(command, env, lambda: ArxivReplay.starts[-1:] == [PAGE])
    assert ledger_count(db, "arxiv_api") == PAGE and ledger_count(db, "index") == 0

    # 2. Rerun: it resumes at offset PAGE; killed while embedding, after some steps are indexed.
    ArxivReplay.hold_at, ArxivReplay.starts = None, []
    ArxivReplay.gate.set()
    assert run_until(command, env, lambda: 0 < ledger_count(db, "index") < PAPERS)
    assert ledger_count(db, "index") % STEP == 0  # whole steps only
    assert ArxivReplay.starts[:1] == [PAGE]
    assert ledger_count(db, "arxiv_api") == PAPERS

    # 3. Rerun to the end.
    assert not run_until(command, env, lambda: False)

    settings = Settings(data_dir=data)
    catalog, index = settings.catalog(), settings.index()
    with sqlite3.connect(db) as connection:
        ids = [row[0] for row in connection.execute("SELECT id FROM papers")]
    assert len(ids) == len(set(ids)) == PAPERS
    papers = list(catalog.iter_papers())
    windows = sum(len(abstract_reading(p, settings.embedder().pieces).windows) for p in papers)
    assert index.count(Filters(kinds=("abstract",))) == PAPERS
    assert index.count(Filters(kinds=("window",))) == windows
    assert index.count() == PAPERS + windows
    settings.close()
