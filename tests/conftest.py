"""Shared fixtures: the demo corpus loaded once, a scripted LLM server, and no network but loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

# Before anything imports litellm: never fetch its cost map, never inherit the developer's settings.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
for name in list(os.environ):
    if name.startswith("SCHOLARLOOM_") or name.endswith("_API_KEY") or name == "DATABASE_URL":
        del os.environ[name]

from scholarloom.settings import Settings  # noqa: E402
from tests.llm_server import ScriptedLLM  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
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


@pytest.fixture(scope="session", autouse=True)
def no_network():
    socket.socket.connect = _loopback_only
    yield
    socket.socket.connect = _real_connect


@pytest.fixture(scope="session")
def demo_load(tmp_path_factory):
    """The whole demo corpus loaded once into a fresh data directory (about 90 s): (settings, summary)."""
    from ingest.demo import load_demo

    settings = Settings(data_dir=tmp_path_factory.mktemp("demo-data"))
    summary = load_demo(settings.catalog(), settings.index(), settings.embedder())
    yield settings, summary
    settings.close()


@pytest.fixture(scope="session")
def demo(demo_load) -> Settings:
    return demo_load[0]


@pytest.fixture(scope="session")
def llm_server():
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def scripted(llm_server):
    llm_server.replies.clear()
    llm_server.requests.clear()
    yield llm_server
    assert not llm_server.replies, "the test left scripted replies unused"
