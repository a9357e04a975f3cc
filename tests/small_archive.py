"""A small archive for tests that start `scholarloom serve` on it, and recorded arXiv/OpenAlex/PDF answers on a
local HTTP server for the server's on-demand jobs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from auth.accounts import add_user, create_tables
from ingest.demo import DEMO_DIR, load_demo
from tests.ingest.ondemand_fixtures import ASKED, OPENALEX_NOTHING, STAND_IN_PDF, id_list_answer


def small_archive(tmp_path: Path, make_instance, users: dict[str, str]) -> Path:
    """The seed paper and the six full-text papers' records, without their PDFs, and these users (name: password);
    returns the data directory, closed (the server opens the index next)."""
    root = tmp_path / "corpus"
    shutil.copytree(DEMO_DIR / "seed", root / "seed")
    (root / "pdfs").mkdir(parents=True)
    shutil.copy(DEMO_DIR / "pdfs" / "metadata.jsonl", root / "pdfs")
    data = tmp_path / "data"
    settings = make_instance(data)
    load_demo(settings.catalog(), settings.index(), settings.embedder(), root)
    create_tables(settings.catalog().engine)
    for name, password in users.items():
        add_user(settings.catalog().engine, name, password)
    settings.close()
    return data


@contextmanager
def recorded_sources() -> Iterator[dict[str, str]]:
    """A local server answering as arXiv (it knows ASKED only), OpenAlex (knows nothing) and arxiv.org/pdf (a
    stand-in PDF); yields the environment that points `scholarloom serve` at it."""
    from tests.replay import LocalServer

    server = LocalServer({
        "/api/query": lambda p: (200, id_list_answer(ASKED if p.get("id_list") == ASKED else None)),
        "/works": lambda _p: (200, OPENALEX_NOTHING.read_bytes()),
        f"/pdf/{ASKED}": lambda _p: (200, STAND_IN_PDF.read_bytes()),
    })  # fmt: skip
    try:
        yield {"SCHOLARLOOM_SOURCES__ARXIV_API_URL": f"{server.base}/api/query",
               "SCHOLARLOOM_SOURCES__OPENALEX_URL": server.base, "SCHOLARLOOM_SOURCES__ARXIV_PDF_URL":
               f"{server.base}/pdf", "SCHOLARLOOM_SOURCES__PRIVATE_HOSTS": json.dumps([server.host_port]),
               "SCHOLARLOOM_SOURCES__ARXIV_INTERVAL": "0"}  # fmt: skip
    finally:
        server.stop()
