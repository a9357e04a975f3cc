"""Shared fixtures: one models directory and embedder, the demo corpus loaded once, a scripted LLM server, and no\nnetwork but loopback."""

from __future__ import annotations

import atexit
import hashlib
import ipaddress
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

# Before anything imports litellm: never fetch its cost map, never inherit the developer's settings.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
for name in list(os.environ):
    if name.startswith("SCHOLARLOOM_") or name.endswith("_API_KEY") or name == "DATABASE_URL":
        del os.environ[name]


def _keep_bytecode() -> None:
    """Bytecode kept for the run where PYTHONDONTWRITEBYTECODE forbids writing it beside the sources: otherwise every
    process of the run (each worker, and each server, command and model child a test starts) compiles our modules
    again, about half a second of CPU each. One scratch folder outside the tree, handed to the run's processes by
    the environment, removed when the run ends."""
    if not sys.dont_write_bytecode:
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    if not prefix:  # the run's first process (pytest itself, or xdist's controller): the workers inherit it
        prefix = tempfile.mkdtemp(prefix="scholarloom-bytecode-")
        os.environ["PYTHONPYCACHEPREFIX"] = prefix
        atexit.register(shutil.rmtree, prefix, ignore_errors=True)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, False


_keep_bytecode()

from harness.llm_server import ScriptedLLM  # noqa: E402
from retrieval.vectors.embeddings import DENSE_DIM, Embedder  # noqa: E402
from scholarloom.settings import Settings  # noqa: E402
from tests.xdist_groups import put_in_group  # noqa: E402

# The chat app on a real port, for every test that touches Chainlit: Chainlit reads its config on first import, so
# the app is mounted (and its root prepared) before any test imports a Chainlit module.
pytest_plugins = ("tests.chat_server", "tests.small_archive")
FIXTURES = Path(__file__).parent / "fixtures"
PDFS = FIXTURES / "pdfs"
S2ORC, LONGEVAL = "1911.02782", "2301.13298"  # the arXiv ids of the two fixture PDFs (ACL Anthology copies)
REPO = Path(__file__).resolve().parent.parent
ENCODER_THREADS = 1
_real_connect = socket.socket.connect


def _loopback_only(self, address):
    """Tests may talk to servers on this machine only: a real LLM or API call fails by construction."""
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            allowed = ipaddress.ip_address(host).is_loopback
        except ValueError:
            allowed = host == "localhost"
        if not allowed:
            raise ConnectionRefusedError(f"tests may not connect to {host}")
    return _real_connect(self, address)


DEMO_BUILDER = pytest.StashKey()
# Session fixtures that take seconds to build: with several workers (`make test`), the files using one run on one
# worker, which builds it once. Every other file is a group of its own (its module fixtures are built once too).
SHARED_FIXTURES = ("fulltext", "small_server", "postgres")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Files sharing a costly fixture first (the longest units of work), the tests that need the loaded demo last
    (with the rest of their group), and when the demo is not kept yet its build starts now in a process of its own
    (one per run: the only or the first worker starts it), so the others run while it loads."""
    def uses(item, name: str) -> bool:
        return name in getattr(item, "fixturenames", ())

    groups = {str(item.path): item.nodeid.split("::")[0] for item in items}
    for item in items:
        for name in SHARED_FIXTURES:
            if uses(item, name):
                groups[str(item.path)] = name
    late = {groups[str(item.path)] for item in items if uses(item, "demo_load")}
    def rank(item) -> int:
        group = groups[str(item.path)]
        return 2 if group in late else 0 if group in SHARED_FIXTURES else 1

    items.sort(key=rank)  # stable: the files' own order otherwise
    for item in items:
        put_in_group(config, item, groups[str(item.path)])
    needs = [item for item in items if uses(item, "demo_load")]
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    if needs and worker == "gw0":
        from tests.demo_cache import start_building

        config.stash[DEMO_BUILDER] = start_building()


def pytest_sessionfinish(session):
    builder = session.config.stash.get(DEMO_BUILDER, None)
    if builder is not None and builder.poll() is None:  # the run ended before it needed the demo
        builder.kill()
        builder.wait()


@pytest.fixture(scope="session", autouse=True)
def no_network():
    socket.socket.connect = _loopback_only
    yield
    socket.socket.connect = _real_connect


def run_folder(tmp_path_factory) -> Path:
    """The temporary folder of the whole run, which every worker of it shares (a worker's own is inside it)."""
    run = tmp_path_factory.getbasetemp()
    return run.parent if os.environ.get("PYTEST_XDIST_WORKER") else run


@pytest.fixture(scope="session", autouse=True)
def models_dir(tmp_path_factory) -> Path:
    """One prepared models directory for the whole run, shared by its workers and every instance a test makes (in
    this process and in the subprocesses tests start) through SCHOLARLOOM_SHARED_MODELS_DIR, copied from the kept
    one (`tests/demo_cache.py`); and one ONNX thread per encoder: the workers, the servers tests start and their
    job encoders share two cores (onnxruntime's default, a thread per core in each, makes them contend)."""
    from tests.demo_cache import run_models

    folder = run_models(run_folder(tmp_path_factory))
    os.environ["SCHOLARLOOM_SHARED_MODELS_DIR"] = str(folder)
    os.environ["SCHOLARLOOM_EMBED_THREADS"] = str(ENCODER_THREADS)
    yield folder
    os.environ.pop("SCHOLARLOOM_SHARED_MODELS_DIR", None)
    os.environ.pop("SCHOLARLOOM_EMBED_THREADS", None)


class RememberingEmbedder(Embedder):
    """The product's `Embedder`, but a text it embedded once is not run through the encoder again: the vector is a
    pure function of the text (and the model), and the run embeds the same texts in many tests (the shipped PDFs, the
    small archive's abstracts; a rebuild embeds again everything its fixture embedded). What one worker computed
    the other workers read from `shared` (one file per text, named by a digest of the model and the text), so
    everything it hands out was computed by this run's encoder. The texts nobody embedded yet go through
    `Embedder.dense` as they are; what it hands out are copies."""

    def __init__(self, models_dir: Path, threads: int | None = None, shared: Path | None = None) -> None:
        super().__init__(models_dir, threads)
        self.known: dict[str, np.ndarray] = {}
        self.shared = shared

    def _file(self, text: str) -> Path:
        return self.shared / (hashlib.sha256(f"{self.model_id()}\0{text}".encode()).hexdigest() + ".npy")

    def _recall(self, keys: list[str]) -> list[str]:
        """Which of these keys neither this worker nor another has computed yet."""
        missing = list(dict.fromkeys(k for k in keys if k not in self.known))
        if missing and self.shared is not None:
            for key in missing:
                if (path := self._file(key)).exists():
                    self.known[key] = np.load(path)
            missing = [k for k in missing if k not in self.known]
        return missing

    def _keep(self, key: str, vector: np.ndarray) -> None:
        self.known[key] = vector
        if self.shared is not None:  # written whole, then renamed: another worker never reads half of it
            partial = self._file(key).with_suffix(f".{os.getpid()}.partial")
            with partial.open("wb") as out:
                np.save(out, vector)
            partial.replace(self._file(key))

    def dense(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        if missing := self._recall(texts):
            for text, vector in zip(missing, super().dense(missing, batch_size), strict=True):
                self._keep(text, vector)
        return np.stack([self.known[t] for t in texts]) if texts else np.zeros((0, DENSE_DIM), dtype=np.float32)

    def windowed(self, texts, batch_size: int | None = None):
        """A reading's vectors (`Windowed.keys`) remembered like texts'."""
        missing = [t for t in texts if self._recall(t.keys())]
        for text, (whole, windows) in zip(missing, super().windowed(missing, batch_size), strict=True):
            for key, vector in zip(text.keys(), [whole, *windows], strict=True):
                self._keep(key, vector)
        return [(self.known[t.keys()[0]], [self.known[k] for k in t.keys()[1:]]) for t in texts]


@pytest.fixture(scope="session")
def embedder(models_dir, tmp_path_factory):
    """One embedder (the ONNX session and the BM25 model) for every in-process instance of the run; what it computes
    is shared with the run's other workers through a folder of the run's temporary directory."""
    shared = run_folder(tmp_path_factory) / "vectors"
    shared.mkdir(exist_ok=True)
    return RememberingEmbedder(models_dir, ENCODER_THREADS, shared)


@pytest.fixture
def make_instance(embedder):
    """A fresh instance on a data directory, sharing the run's embedder; closed after the test."""
    made = []

    def make(data_dir: Path, **fields) -> Settings:
        settings = Settings(data_dir=data_dir, **fields).adopt(embedder=embedder)
        made.append(settings)
        return settings

    yield make
    for settings in made:
        settings.close()


@pytest.fixture(scope="session")
def demo_load(tmp_path_factory, embedder):
    """The whole demo corpus loaded into a fresh data directory: (settings, summary). A cold load takes about
    three minutes; the result is kept (`tests/demo_cache.py`) under a fingerprint of everything that makes it."""
    from tests.demo_cache import demo_build

    data_dir = tmp_path_factory.mktemp("demo-data")
    summary = demo_build(data_dir, embedder)
    settings = Settings(data_dir=data_dir).adopt(embedder=embedder)
    yield settings, summary
    settings.close()


@pytest.fixture(scope="session")
def demo(demo_load) -> Settings:
    return demo_load[0]


@pytest.fixture
def empty_instance(make_instance, tmp_path) -> Settings:
    """A fresh, empty instance (the run's shared models and embedder, nothing else)."""
    return make_instance(tmp_path / "instance")


def first_pages(source: Path, count: int, folder: Path) -> Path:
    """A real PDF of `source`'s first `count` pages (its document info kept), written into `folder` under the same
    name: for tests where a server reads an upload whose length does not matter, and the job's encoder would
    otherwise embed every page of it."""
    from pypdf import PdfReader, PdfWriter

    reader, writer = PdfReader(source), PdfWriter()
    for page in reader.pages[:count]:
        writer.add_page(page)
    if reader.metadata:
        writer.add_metadata(dict(reader.metadata))
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / source.name).open("wb") as out:
        writer.write(out)
    return folder / source.name


def _fulltext_paper(arxiv_id, title, names):
    from datetime import datetime, timezone

    from retrieval.scholarly.records import AuthorRecord, PaperRecord

    return PaperRecord(
        id=arxiv_id,
        arxiv_id=arxiv_id,
        title=title,
        abstract="",
        categories=["cs.CL"],
        authors=[AuthorRecord(name=n) for n in names],
        source="test",
        published=datetime(2020, 1, 1, tzinfo=timezone.utc),
    )


@pytest.fixture(scope="session")
def fulltext(tmp_path_factory, embedder):
    """A fresh instance holding the two papers' metadata and, from their PDFs, their full text."""
    import shutil

    from ingest.indexing import index_papers
    from ingest.pdfs import ingest_pdf_files
    from ingest.pipeline import load_records
    from ingest.report import Summary
    from ingest.writer import Writer

    root = tmp_path_factory.mktemp("fulltext")
    files = root / "pdfs"
    files.mkdir()
    shutil.copy(PDFS / "2020.acl-main.447.pdf", files / f"{S2ORC}v2.pdf")
    shutil.copy(PDFS / "2023.eacl-main.121.pdf", files / f"{LONGEVAL}.pdf")
    (files / "9999.99999.pdf").write_bytes(b"%PDF-1.7 not really")  # no such paper: reported, skipped
    settings = Settings(data_dir=root / "data").adopt(embedder=embedder)
    catalog, index = settings.catalog(), settings.index()
    records = [
        _fulltext_paper(S2ORC, "S2ORC: The Semantic Scholar Open Research Corpus", ["Kyle Lo", "Lucy Lu Wang"]),
        _fulltext_paper(LONGEVAL, "LongEval: Guidelines for Human Evaluation of Faithfulness", ["Kalpesh Krishna"]),
    ]
    summary = Summary()
    load_records(catalog, "test", records, summary)
    index_papers(Writer(catalog, index, embedder), summary)
    ingest_pdf_files(Writer(catalog, index, embedder), sorted(files.glob("*.pdf")), summary)
    yield settings, summary, files
    settings.close()


@pytest.fixture(scope="session")
def postgres():
    """One throwaway PostgreSQL cluster for the run's PostgreSQL tests (a group, so one worker starts it); each test
    makes the databases it needs on it (`new_database`)."""
    from tests.postgres import PostgresServer

    server = PostgresServer().start()
    yield server
    server.close()


@pytest.fixture(scope="session")
def llm_server():
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def scripted(llm_server):
    llm_server.replies.clear()
    llm_server.requests.clear()
    llm_server.arrivals.clear()
    llm_server.hung_up.clear()
    yield llm_server
    llm_server.responder = None  # a persona a test set answers no other test
    assert not llm_server.replies, "the test left scripted replies unused"
