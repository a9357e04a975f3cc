"""The whole app on a real port (one per test session: Chainlit keeps its state in the process), two users,
and a socket.io client that behaves like the browser. A pytest plugin of the root conftest: a test that imports
any Chainlit module asks for `server` first (Chainlit reads its config on first import)."""

import threading

import pytest
import uvicorn

from assistant.agent import Agent
from assistant.llm import LLMConfig
from auth.accounts import add_user, clear_sign_in_failures, create_tables
from harness.chat_client import PASSWORD, USERS, ChatClient, sign_in  # noqa: F401  (what the tests take from here)
from harness.serve import free_port, wait_for_health
from scholarloom.app import create_app, server_config
from scholarloom.runtime import Runtime
from scholarloom.settings import Settings


@pytest.fixture(scope="session")
def server(demo, llm_server):
    port = free_port()
    settings = Settings(
        data_dir=demo.data_dir, port=port, demo=True, llm="openai/scripted", llm_api_base=llm_server.api_base
    )
    agent = Agent(LLMConfig(model="openai/scripted", api_base=llm_server.api_base, api_key="test-key", timeout=20))
    runtime = Runtime(settings, demo.archive(), agent)
    create_tables(demo.catalog().engine)
    clear_sign_in_failures(demo.catalog().engine)  # a reused test data directory keeps its earlier runs' failures
    for name in USERS:
        add_user(demo.catalog().engine, name, PASSWORD, replace=True)
    app = create_app(settings, runtime=runtime)
    uv = uvicorn.Server(server_config(settings, app))  # as `scholarloom serve` runs it
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base, 30)  # poll health instead of sleeping a fixed time
    except RuntimeError:
        pytest.fail("the app did not start")
    yield base
    uv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def history(server):
    """Chainlit's data layer of the running app; a test fails if any history statement failed during it."""
    from chainlit.data import get_data_layer

    layer = get_data_layer()
    seen = len(layer.failures)
    yield layer
    assert layer.failures[seen:] == [], "chat history writes failed"
