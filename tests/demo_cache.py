"""The demo corpus loaded once and kept between test runs, under a fingerprint of everything that makes it.

The fingerprint covers the corpus (`data/demo`), the code that loads and indexes it (`ingest/`, `retrieval/`,
which also fixes the index format), the models' code and the locked library versions. Any change to those
rebuilds; an unchanged tree copies the kept build into the run's own directory (tests write to it: users, chat
threads) and reads the load's summary back, so the tests of the load itself still see what it reported.

The models the run encodes with (`prepare_models`: the ONNX encoder written from the installed weights, its int8
copy, the BM25 folder) are kept beside it the same way, under a fingerprint of `retrieval/vectors/` and the locks:
every worker, the demo's build and the servers tests start read one copy of them a run, made once for all runs.

The cache lives in SL_TEST_CACHE (default `~/.cache/scholarloom-tests`); SL_TEST_CACHE=off always loads afresh.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path

from ingest.report import Failure, Summary

REPO = Path(__file__).resolve().parent.parent
INPUTS = ("data/demo", "ingest", "retrieval")
MODEL_INPUTS = ("retrieval/vectors",)
LOCKS = ("requirements.lock", "requirements-model.lock")
READY = "prepared"  # written last: a models folder without it is half made


def fingerprint(folders: tuple[str, ...] = INPUTS) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    for lock in LOCKS:
        digest.update((REPO / lock).read_bytes())
    return digest.hexdigest()[:20]


def cache_root() -> Path | None:
    chosen = os.environ.get("SL_TEST_CACHE", "")
    if chosen.lower() == "off":
        return None
    return Path(chosen) if chosen else Path.home() / ".cache" / "scholarloom-tests"


def _write_summary(summary: Summary, path: Path) -> None:
    failures = [f.__dict__ for f in summary.failures]
    path.write_text(json.dumps({"counts": dict(summary.counts), "failures": failures}))


def _read_summary(path: Path) -> Summary:
    stored = json.loads(path.read_text())
    return Summary(Counter(stored["counts"]), [Failure(**f) for f in stored["failures"]])


def kept_build() -> Path | None:
    """Where the current tree's build is (or will be) kept; None when the cache is off."""
    root = cache_root()
    return root / f"demo-{fingerprint()}" if root else None


def start_building() -> subprocess.Popen | None:
    """Begin the build in a process of its own when none is kept for this tree, so the tests that do not need the
    demo run meanwhile (the run's first test to need it waits for this build instead of making its own)."""
    kept = kept_build()
    if kept is None or (kept / "summary.json").is_file():
        return None
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        with open(kept.parent / "build.log", "wb") as log:
            command = [sys.executable, "-m", "tests.demo_cache"]
            return subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    except OSError:  # a cache that cannot be written (read-only home, full disk): the tests load it themselves
        return None


def kept_models() -> Path | None:
    """The prepared models folder kept for this tree (made now when missing); None when the cache is off or cannot
    be written. Read it, never write to it: `run_models` gives a run its own copy."""
    from retrieval.vectors.embeddings import prepare_models
    from retrieval.vectors.punctuation import kept_punctuation

    root = cache_root()
    if root is None:
        return None
    kept = root / f"models-{fingerprint(MODEL_INPUTS)}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        # A lock of its own: the demo's build holds build.lock for minutes, and needs these models first.
        with (root / "models.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (kept / READY).is_file():
                scratch = root / f"models-partial-{uuid.uuid4().hex}"
                prepare_models(scratch)
                kept_punctuation(scratch)  # what the encoder would write here on first use, so nobody writes here
                (scratch / READY).touch()
                for old in root.glob("models-*"):  # one kept set, no half-made one
                    if old != scratch:
                        shutil.rmtree(old, ignore_errors=True)
                scratch.rename(kept)
    except OSError:  # a cache that cannot be written only costs time
        return None
    return kept


def run_models(run: Path) -> Path:
    """The models folder of one test run (`run`: the folder its workers share), copied from the kept one once for
    all of them, or prepared here when nothing is kept: the export and its int8 copy take seconds of CPU, which
    each worker and the demo's build used to spend again."""
    from retrieval.vectors.embeddings import prepare_models

    folder = run / "models"
    run.mkdir(parents=True, exist_ok=True)
    with (run / "models.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / READY).is_file():
            if not _copy_kept_models(folder):
                prepare_models(folder)
            (folder / READY).touch()
    return folder


def _copy_kept_models(folder: Path) -> bool:
    """A copy (tests may add files beside the models) of the kept models in `folder`; False when none is kept."""
    if (kept := kept_models()) is None:
        return False
    try:
        shutil.copytree(kept, folder, dirs_exist_ok=True)
        return True
    except OSError:  # a run of another tree replaced the kept set meanwhile: prepared afresh instead
        shutil.rmtree(folder, ignore_errors=True)
        return False


def demo_build(data_dir: Path, embedder, copy: bool = True) -> Summary:
    """Fill `data_dir` with the loaded demo (from the cache when its fingerprint matches) and return the summary
    of the load that made it."""
    root = cache_root()
    try:
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
            lock = (root / "build.lock").open("w")
    except OSError:  # a cache that cannot be written only costs time
        root = None
    if root is None:
        return _load(data_dir, embedder)
    with lock:  # the test run's other workers (and the build started at collection) wait for one build
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = root / f"demo-{fingerprint()}"
        if (kept / "summary.json").is_file():
            if copy:
                shutil.copytree(kept / "data", data_dir, dirs_exist_ok=True)
            return _read_summary(kept / "summary.json")
        summary = _load(data_dir, embedder)
        _keep(data_dir, summary, root, kept)
        return summary


def _load(data_dir: Path, embedder) -> Summary:
    from ingest.demo import load_demo
    from ingest.writer import Writer
    from scholarloom.settings import Settings

    settings = Settings(data_dir=data_dir).adopt(embedder=embedder)
    try:
        summary = load_demo(Writer.of(settings.archive()))
    finally:
        settings.close()  # the embedded index is flushed and unlocked before it is copied
    return summary


def copy_live_data(source: Path, target: Path, *ignored: str) -> None:
    """Copy a data directory whose catalog this process has open. The catalog goes through SQLite's backup API:
    a plain copy opens and closes the database file here, and closing any descriptor of a file drops every POSIX
    lock this process holds on it, so the next process to close its connection believes itself the last one,
    checkpoints and deletes the write-ahead log under this process's connections, and this process's later
    writes are lost (and its reads stale)."""
    import sqlite3

    shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("scholarloom.db*", *ignored))
    live, copy = sqlite3.connect(source / "scholarloom.db"), sqlite3.connect(target / "scholarloom.db")
    try:
        live.backup(copy)
    finally:
        live.close()
        copy.close()


def _keep(data_dir: Path, summary: Summary, root: Path, kept: Path) -> None:
    """Store the build for later runs; a cache that cannot be written (read-only home, full disk) only costs time."""
    scratch = root / f"building-{uuid.uuid4().hex}"
    try:
        shutil.copytree(data_dir, scratch / "data")
        _write_summary(summary, scratch / "summary.json")
        for old in [*root.glob("demo-*"), *root.glob("building-*")]:  # one kept build, no half-made one
            if old != scratch:
                shutil.rmtree(old, ignore_errors=True)
        scratch.rename(kept)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)


def _build_and_keep() -> None:
    """`python -m tests.demo_cache`: make the kept build (a no-op when another process already has)."""
    import socket

    from retrieval.vectors.embeddings import Embedder, prepare_models
    from tests.conftest import _loopback_only

    socket.socket.connect = _loopback_only  # as offline as the tests
    with tempfile.TemporaryDirectory(prefix="demo-build-") as scratch:
        models = kept_models()  # the run's workers copy the same folder meanwhile: one export for all of them
        if models is None:
            models = Path(scratch) / "models"
            prepare_models(models)
        demo_build(Path(scratch) / "data", Embedder(models), copy=False)


if __name__ == "__main__":
    _build_and_keep()
