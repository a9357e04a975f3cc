"""arXiv's bulk metadata snapshot: filters, gzip, bad lines named by number, a kill and a resume without
duplicates, and a later snapshot that updates only what changed. The records are arXiv's own (the demo's slices
of the published snapshot); the bad lines are written here."""

from __future__ import annotations

import gzip
import json
import signal
import sqlite3
import subprocess
import time
from datetime import date
from email.utils import parsedate_to_datetime

from harness.serve import child_environment
from ingest.demo import DEMO_DIR
from ingest.report import Summary
from ingest.snapshot import STAGE, SnapshotFilter, cursor_name, import_snapshot
from tests.scholarloom.test_jobs_serve import SCHOLARLOOM

SLICE = DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl"
HEAD = DEMO_DIR / "arxiv_metadata" / "arxiv-metadata-oai-snapshot.head200.jsonl"


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _counts(database) -> tuple[int, int, int, int]:
    with sqlite3.connect(database) as db:
        papers = db.execute("SELECT count(*), count(DISTINCT id) FROM papers").fetchone()
        doubled = db.execute("SELECT count(*) FROM (SELECT paper_id, position FROM authorships "
                             "GROUP BY paper_id, position HAVING count(*) > 1)").fetchone()[0]  # fmt: skip
        ledger = db.execute("SELECT count(*) FROM ingest_ledger WHERE stage = ?", (STAGE,)).fetchone()[0]
    return *papers, doubled, ledger


def test_filters_gzip_and_bad_lines_by_number(make_instance, tmp_path):
    rows = _rows(HEAD)
    bad = ["{not json", "[1, 2, 3]", json.dumps({**rows[0], "id": "0704.9999", "authors": None, "authors_parsed": None}), ""]
    lines = [json.dumps(r) for r in rows[:120]] + bad + [json.dumps(r) for r in rows[120:]]
    packed = tmp_path / "snapshot.jsonl.gz"
    packed.write_bytes(gzip.compress("\n".join(lines).encode()))
    settings = make_instance(tmp_path / "data")
    since, until = date(2007, 4, 1), date(2007, 4, 2)  # the slice's first versions run from March 31

    def kept_by_hand(row) -> bool:  # the filter, worked out from the raw records without the module
        first = parsedate_to_datetime(row["versions"][0]["created"]).date()
        return any(c.startswith(("hep-", "astro-ph")) for c in row["categories"].split()) and since <= first <= until

    expected = {r["id"] for r in rows if kept_by_hand(r)}
    assert 20 < len(expected) < len(rows)  # the filters keep some and leave some
    summary = Summary()
    wanted = SnapshotFilter(("hep-", "astro-ph"), since, until)
    kept = import_snapshot(settings.catalog(), packed, summary, wanted=wanted, batch=40)
    assert kept == len(expected) == summary.counts["added"]
    assert set(settings.catalog().ledger_hashes(STAGE)) == expected
    reasons = {f.key: f.reason for f in summary.failures}
    assert set(reasons) == {"line 121", "line 122", "line 123 (0704.9999)"}, reasons  # the blank line 124 is no record
    assert reasons["line 121"].startswith("not JSON") and "list" in reasons["line 122"]
    assert "no authors" in reasons["line 123 (0704.9999)"]
    everything = Summary()  # another file (no filter): what the first run wrote is unchanged, the rest is added
    plain = tmp_path / "snapshot.jsonl"
    plain.write_text("\n".join(lines))
    import_snapshot(settings.catalog(), plain, everything)
    assert everything.counts["unchanged"] == len(expected) and everything.counts["added"] == len(rows) - len(expected)
    assert len(everything.failures) == 3


def test_a_later_snapshot_updates_only_what_changed(make_instance, tmp_path):
    rows = _rows(HEAD)[:3]
    first, second = tmp_path / "2026-11.jsonl", tmp_path / "2026-12.jsonl"
    first.write_text("\n".join(json.dumps(r) for r in rows))
    newer = {**rows[1], "title": rows[1]["title"] + " (revised)",
             "versions": [*rows[1]["versions"], {"version": "v9", "created": "Mon, 2 Nov 2026 10:00:00 GMT"}]}
    second.write_text("\n".join(json.dumps(r) for r in [rows[0], newer, rows[2]]))  # fmt: skip
    settings = make_instance(tmp_path / "data")
    import_snapshot(settings.catalog(), first, Summary())
    again = Summary()
    import_snapshot(settings.catalog(), first, again)  # the same file, read to its end already: nothing to read
    assert again.counts["resumed after line"] == 3 and not again.counts["added"] + again.counts["unchanged"]
    later = Summary()
    import_snapshot(settings.catalog(), second, later)
    assert (later.counts["updated"], later.counts["unchanged"]) == (1, 2)
    paper = settings.catalog().papers([rows[1]["id"]])[rows[1]["id"]]
    assert paper.title.endswith("(revised)") and paper.version == len(newer["versions"])


def test_a_killed_import_resumes_after_its_last_commit_without_duplicates(tmp_path):
    data = tmp_path / "data"
    environment = child_environment(data)
    command = [SCHOLARLOOM, "ingest", "snapshot", str(SLICE), "--no-index"]
    database = data / "scholarloom.db"
    run = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    line = 0
    while not line and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            with sqlite3.connect(database) as db:
                found = db.execute("SELECT state FROM harvest_cursors WHERE name = ?", (cursor_name(SLICE),)).fetchone()
            line = json.loads(found[0])["line"] if found else 0
        except sqlite3.OperationalError:  # the tables are not made yet
            pass
    assert run.poll() is None, run.communicate()[0].decode()[-2000:]  # killed mid-run, after a committed batch
    run.send_signal(signal.SIGKILL)
    run.wait()
    papers, distinct, doubled, ledger = _counts(database)
    assert 0 < line < 1001 and papers == distinct and doubled == 0 and papers >= line
    finished = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-2000:]
    assert f"resumed after line {line}" in finished.stdout
    papers, distinct, doubled, ledger = _counts(database)
    assert papers == distinct == ledger == len(_rows(SLICE)) and doubled == 0
