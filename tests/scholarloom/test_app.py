"""The whole app on a real port: pages, Chainlit at /chat, password sign-in, and a chat turn over socket.io."""

import asyncio
import socket
import threading
import time
import uuid
from datetime import datetime, timezone

import httpx
import pytest
import socketio
import uvicorn

from assistant.agent import Agent
from assistant.llm import LLMConfig
from auth.accounts import add_user, create_tables
from scholarloom.app import create_app
from scholarloom.runtime import Runtime
from scholarloom.settings import Settings
from tests.llm_server import text, tool_call

PASSWORD = "correct horse battery"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(demo, llm_server):
    port = free_port()
    settings = Settings(
        data_dir=demo.data_dir, port=port, demo=True, llm="openai/scripted", llm_api_base=llm_server.api_base
    )
    agent = Agent(LLMConfig(model="openai/scripted", api_base=llm_server.api_base, api_key="test-key", timeout=20))
    runtime = Runtime(settings, demo.catalog(), demo.index(), demo.embedder(), agent)
    create_tables(demo.catalog().engine)
    add_user(demo.catalog().engine, "alice", PASSWORD, replace=True)
    app = create_app(settings, runtime=runtime)
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # poll health instead of sleeping a fixed time
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        pytest.fail("the app did not start")
    yield base
    uv.should_exit = True
    thread.join(timeout=10)


def test_pages_and_chat_share_one_app(server):
    assert httpx.get(server + "/healthz").json()["papers"] > 1700
    paper = httpx.get(server + "/papers/2006.07357", follow_redirects=True)
    assert paper.status_code == 200 and "Hindsight Logging for Model Training" in paper.text
    chat = httpx.get(server + "/chat/")
    assert chat.status_code == 200 and '<div id="root">' in chat.text
    config = httpx.get(server + "/chat/auth/config").json()
    assert config["requireLogin"] is True and config["passwordAuth"] is True
    missing = httpx.get(server + "/nowhere")
    assert missing.status_code == 404 and "may not be harvested yet" in missing.text


def test_password_sign_in(server):
    wrong = httpx.post(server + "/chat/login", data={"username": "alice", "password": "wrong password"})
    unknown = httpx.post(server + "/chat/login", data={"username": "mallory", "password": PASSWORD})
    assert wrong.status_code == unknown.status_code == 401 and wrong.json() == unknown.json()
    right = httpx.post(server + "/chat/login", data={"username": "alice", "password": PASSWORD})
    assert right.status_code == 200
    cookie = right.headers["set-cookie"]
    assert cookie.startswith("access_token=") and "HttpOnly" in cookie


async def test_chat_turn_over_socketio(server, scripted):
    scripted.enqueue(
        tool_call("search_papers", query="replay log statements from checkpoints after training"),
        text("Flor replays log statements from checkpoints [1]."),
    )
    async with httpx.AsyncClient(base_url=server) as http:
        login = await http.post("/chat/login", data={"username": "alice", "password": PASSWORD})
    token = login.cookies["access_token"]
    events: list[tuple[str, object]] = []
    done = asyncio.Event()
    client = socketio.AsyncClient()

    @client.on("*")
    async def record(event, data):
        events.append((event, data))
        if event == "update_message" and data.get("name") == "on_message":  # the turn's run step ended
            done.set()

    await client.connect(
        server,
        socketio_path="/chat/ws/socket.io",
        headers={"Cookie": f"access_token={token}"},
        auth={"clientType": "webapp", "sessionId": str(uuid.uuid4()), "threadId": "", "userEnv": "{}"},
        transports=["websocket"],
    )
    await client.emit("connection_successful")
    message = {
        "id": str(uuid.uuid4()),
        "threadId": "",
        "name": "alice",
        "type": "user_message",
        "output": "How do I add logging after training?",
        "createdAt": datetime.now(timezone.utc).isoformat(),
    }
    await client.emit("client_message", {"message": message, "fileReferences": None})
    await asyncio.wait_for(done.wait(), timeout=60)
    await client.disconnect()

    steps = [d for e, d in events if e in ("new_message", "update_message") and d.get("type") == "tool"]
    assert steps and steps[0]["name"] == "search_papers" and "Hindsight Logging" in steps[-1]["output"]
    # Chainlit sends the first piece with stream_start, the rest as stream_token events.
    tokens = "".join(
        d["output"] if e == "stream_start" else d["token"] for e, d in events if e in ("stream_start", "stream_token")
    )
    assert tokens.startswith("Flor replays log statements")
    final = [d for e, d in events if e == "update_message" and d.get("type") == "assistant_message"][-1]
    assert "[[1]](/papers/2006.07357-hindsight-logging-for-model-training)" in final["output"]
    assert "**Sources**" in final["output"]
