"""arXiv's bulk metadata snapshot (one JSON record a line, the file arXiv publishes for bulk use) into the catalog.

The file is read as a stream, plain or gzip (told by its first bytes), in constant memory: lines are parsed and
filtered one at a time (`SnapshotFilter`: category prefixes, the first version's date) and written in batches
through `ingest.pipeline.load_records`, whose ledger (stage `arxiv_snapshot`, one digest a paper) makes a record
that did not change cost nothing and a new version of one update it. Each batch's commit also stores where the file
was read up to (a harvest cursor named after the file), so a run killed at any point starts again after the last
committed line of the same file; a different file (a later snapshot) is read from its start, and only what changed
is written. A line that is not JSON or not a usable record is reported with its number and skipped.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import BinaryIO

from ingest.parsers.arxiv import snapshot_record
from ingest.parsers.common import attempt
from ingest.pipeline import NullProgress, load_records
from ingest.report import Failure, Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.records import PaperRecord

STAGE = "arxiv_snapshot"
BATCH = 500  # records a commit: what a kill can cost to read again
MB = 1024 * 1024
_HEAD = MB  # the bytes that, with the size, tell one file from another


@dataclass(frozen=True)
class SnapshotFilter:
    """Which records to keep: any category starting with one of `categories` (`cs.` or `cs.CL`; none: all), and a
    first version dated from `since` to `until` (inclusive; a record without dates is kept only when neither is
    set)."""

    categories: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None

    def wants(self, raw: dict) -> bool:
        if self.categories:
            listed = raw.get("categories")
            if not isinstance(listed, str) or not any(c.startswith(self.categories) for c in listed.split()):
                return False
        if self.since is None and self.until is None:
            return True
        first = _first_version_day(raw)
        if first is None:
            return False
        return (self.since is None or first >= self.since) and (self.until is None or first <= self.until)


def _first_version_day(raw: dict) -> date | None:
    versions = raw.get("versions")
    try:
        return parsedate_to_datetime(versions[0]["created"]).date() if versions else None
    except (TypeError, KeyError, IndexError, ValueError):
        return None


def file_identity(path: Path) -> dict:
    """What tells this file from another: its size and a digest of its first megabyte."""
    with path.open("rb") as handle:
        head = handle.read(_HEAD)
    return {"size": path.stat().st_size, "head": hashlib.sha256(head).hexdigest()[:32]}


def cursor_name(path: Path) -> str:
    return f"{STAGE}:{path.name}"


def _opened(path: Path) -> tuple[BinaryIO, BinaryIO]:
    """(the raw file, what to read lines from): gzip when the file starts with gzip's magic bytes."""
    raw = path.open("rb")
    if raw.read(2) == b"\x1f\x8b":
        raw.seek(0)
        return raw, gzip.GzipFile(fileobj=raw, mode="rb")
    raw.seek(0)
    return raw, raw


def _records(lines: Iterator[tuple[int, bytes]], wanted: SnapshotFilter) -> Iterator[tuple[int, PaperRecord | Failure]]:
    """(line number, record or failure) for the lines the filter keeps; blank lines and filtered-out ones yield
    (number, None) so the caller still knows how far it read."""
    for number, line in lines:
        if not line.strip():
            yield number, None
            continue
        try:
            raw = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            yield number, Failure(STAGE, f"line {number}", f"not JSON: {exc}")
            continue
        except RecursionError:
            yield number, Failure(STAGE, f"line {number}", "not usable: JSON nested too deeply")
            continue
        if not isinstance(raw, dict):
            yield number, Failure(STAGE, f"line {number}", f"not a record: a JSON {type(raw).__name__}")
            continue
        if not wanted.wants(raw):
            yield number, None
            continue
        found = attempt(STAGE, f"line {number}", lambda raw=raw: snapshot_record(raw, STAGE))
        if isinstance(found, Failure) and raw.get("id"):
            found = Failure(STAGE, f"line {number} ({str(raw['id'])[:40]})", found.reason)
        yield number, found


def import_snapshot(
    catalog: Catalog,
    path: Path,
    summary: Summary,
    progress=None,
    *,
    wanted: SnapshotFilter = SnapshotFilter(),
    limit: int | None = None,
    batch: int = BATCH,
) -> int:
    """Read the snapshot at `path` into the catalog (see the module's text); returns the records it kept. `limit`:
    stop after this many kept records (a trial run)."""
    progress = progress or NullProgress()
    identity = file_identity(path)
    name = cursor_name(path)
    stored = catalog.cursor(name) or {}
    resume = stored.get("line", 0) if {k: stored.get(k) for k in identity} == identity else 0
    if resume:
        summary.add("resumed after line", resume)
    raw, text = _opened(path)
    task = progress.add_task(f"snapshot {path.name[:30]} (MB read)", total=round(identity["size"] / MB, 1))
    kept, pending, reported = 0, [], 0.0
    try:
        lines = ((n, line) for n, line in enumerate(text, start=1) if n > resume)
        last = resume
        for number, found in _records(lines, wanted):
            last = number
            if found is not None:
                pending.append(found)
                kept += not isinstance(found, Failure)
            if len(pending) >= batch or (limit is not None and kept >= limit):
                load_records(catalog, STAGE, pending, summary, cursors={name: {**identity, "line": last}})
                pending = []
                reported = _advance(progress, task, raw, reported)
            if limit is not None and kept >= limit:
                break
        load_records(catalog, STAGE, pending, summary, cursors={name: {**identity, "line": last}})
        _advance(progress, task, raw, reported)
    finally:
        text.close()
        raw.close()
    return kept


def _advance(progress, task: int, raw: BinaryIO, reported: float) -> float:
    """Progress in megabytes of the file as stored (compressed, for gzip), which is what its size says."""
    now = raw.tell() / MB
    progress.advance(task, round(now - reported, 3))
    return now
