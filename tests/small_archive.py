"""A small archive for tests that start `scholarloom serve` on it, recorded arXiv/OpenAlex/PDF answers on a
local HTTP server for the server's on-demand jobs, and one such server shared by the tests that can share it."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from auth.accounts import add_user, create_tables
from harness.serve import Server, served
from ingest.demo import DEMO_DIR, load_demo
from ingest.writer import Writer
from tests.chat_server import PASSWORD
from tests.ingest import oai_fixtures as oai
from tests.ingest.ondemand_fixtures import (
    ALSO_ASKED,
    ASKED,
    OPENALEX_NOTHING,
    STAND_IN_PDF,
    THIRD_ASKED,
    id_list_answer,
)

# Two real records not in the small archive, for the `update` job of the saved-questions browser test: a survey of
# young stars in the Serpens cloud (what its question asks about) and a paper on graph decompositions (unrelated).
UPDATE_BRINGS = ("0704.0009", "0704.0002")


_TEMPLATES: list[Path] = []  # the run's folder of built small archives, shared by its workers (set below)


@pytest.fixture(scope="session", autouse=True)
def small_archive_templates(tmp_path_factory) -> Iterator[None]:
    """Where `small_archive` keeps the archives it built this run (one a set of users), in the folder the run's
    workers share."""
    run = tmp_path_factory.getbasetemp()
    run = run.parent if os.environ.get("PYTEST_XDIST_WORKER") else run
    _TEMPLATES[:] = [run / "small-archives"]
    yield
    _TEMPLATES.clear()


def small_archive(tmp_path: Path, make_instance, users: dict[str, str]) -> Path:
    """The seed paper and the six full-text papers' records, without their PDFs, and these users (name: password);
    returns the data directory, closed (the server opens the index next). Built once a run for each set of users
    (by the first worker to need it; the load and the index's set-up take seconds on a busy machine) and copied into
    `tmp_path`: every test gets a directory of its own, made alike."""
    data = tmp_path / "data"
    if not _TEMPLATES:
        return _build_small_archive(tmp_path, make_instance, users)
    folder = _TEMPLATES[0]
    name = hashlib.sha256(json.dumps(sorted(users.items())).encode()).hexdigest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / f"{name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (folder / name).is_dir():
                scratch = folder / f"building-{uuid.uuid4().hex}"
                _build_small_archive(scratch, make_instance, users).rename(folder / name)
                shutil.rmtree(scratch, ignore_errors=True)
    except OSError:  # a folder that cannot be written only costs time
        return _build_small_archive(tmp_path, make_instance, users)
    shutil.copytree(folder / name, data)
    return data


def _build_small_archive(tmp_path: Path, make_instance, users: dict[str, str]) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(DEMO_DIR / "seed", root / "seed")
    (root / "pdfs").mkdir(parents=True)
    shutil.copy(DEMO_DIR / "pdfs" / "metadata.jsonl", root / "pdfs")
    data = tmp_path / "data"
    settings = make_instance(data)
    load_demo(Writer.of(settings.archive()), root)
    create_tables(settings.catalog().engine)
    for name, password in users.items():
        add_user(settings.catalog().engine, name, password)
    settings.close()
    return data


def new_user_on(data_dir: Path, user: str, password: str = PASSWORD) -> None:
    """An account on a served instance (written to its database from here; the server reads it at sign-in)."""
    from scholarloom.settings import Settings

    engine = Settings(data_dir=data_dir).catalog().engine
    add_user(engine, user, password, replace=True)
    engine.dispose()


@contextmanager
def recorded_sources() -> Iterator[dict[str, str]]:
    """A local server answering as arXiv (its API knows ASKED, ALSO_ASKED and THIRD_ASKED only; an OAI-PMH harvest,
    the `update` job's, brings UPDATE_BRINGS), OpenAlex (knows nothing) and arxiv.org/pdf (a stand-in PDF); yields
    the environment that points `scholarloom serve` at it."""
    from tests.replay import LocalServer

    known = (ASKED, ALSO_ASKED, THIRD_ASKED)
    update = oai.list_records([oai.record(r) for r in oai.real_records(12) if r["id"] in UPDATE_BRINGS], None, 0,
                              len(UPDATE_BRINGS))  # fmt: skip
    server = LocalServer({
        "/oai": lambda _p: (200, update),
        "/api/query": lambda p: (200, id_list_answer(p.get("id_list") if p.get("id_list") in known else None)),
        "/works": lambda _p: (200, OPENALEX_NOTHING.read_bytes()),
        **{f"/pdf/{arxiv_id}": lambda _p: (200, STAND_IN_PDF.read_bytes()) for arxiv_id in known},
    })  # fmt: skip
    try:
        yield {"SCHOLARLOOM_SOURCES__ARXIV_API_URL": f"{server.base}/api/query",
               "SCHOLARLOOM_SOURCES__ARXIV_OAI_URL": f"{server.base}/oai",
               "SCHOLARLOOM_SOURCES__OPENALEX_URL": server.base, "SCHOLARLOOM_SOURCES__ARXIV_PDF_URL":
               f"{server.base}/pdf", "SCHOLARLOOM_SOURCES__PRIVATE_HOSTS": json.dumps([server.host_port]),
               "SCHOLARLOOM_SOURCES__ARXIV_INTERVAL": "0"}  # fmt: skip
    finally:
        server.stop()


@dataclass
class SmallServer:
    base: str
    data: Path
    process: Server


@pytest.fixture(scope="session")
def small_server(tmp_path_factory, embedder) -> Iterator[SmallServer]:
    """`scholarloom serve` on a small archive with the users alice, carol and dave (the chat tests' PASSWORD) and
    the recorded sources, for the whole run: tests on it ask for different papers and look only at their own jobs
    (carol's uploads are hers alone: alice's answers never see them)."""
    from scholarloom.settings import Settings

    root = tmp_path_factory.mktemp("small-server")
    make = lambda data_dir: Settings(data_dir=data_dir).adopt(embedder=embedder)  # noqa: E731
    data = small_archive(root, make, {"alice": PASSWORD, "carol": PASSWORD, "dave": PASSWORD})
    with recorded_sources() as sources, served(data, **sources) as (base, process):
        yield SmallServer(base, data, process)
