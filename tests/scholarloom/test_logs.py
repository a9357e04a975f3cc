"""The server's logs as JSON lines: every line parses, a chat turn's lines (its tools, its model calls) share one
request id, and nothing in them is a password, the session secret or an API key."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import httpx

from common.logs import JsonLines, Redact
from harness.llm_server import failure, text, tool_call
from harness.serve import served
from tests.chat_server import PASSWORD, ChatClient
from tests.small_archive import small_archive

API_KEY = "sk-scholarloom-test-FAKE-4f9c2d7e1a"


def test_secrets_and_their_shapes_are_hidden_in_messages_and_traces():
    redact = Redact(["the-session-secret-0123456789"])
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "key %s, token=%s, Bearer abcdefghijk, %s", (
        "the-session-secret-0123456789", "t0k3n-value", "eyJhbGciOi.eyJzdWIiOiJh.c2lnbmF0dXJl"), None)  # fmt: skip
    try:
        raise RuntimeError(f"provider refused {API_KEY} with password=hunter2hunter2")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    assert redact.filter(record)
    line = JsonLines().format(record)
    entry = json.loads(line)
    assert entry["level"] == "WARNING" and entry["request_id"] == "-"
    for secret in ("the-session-secret", "t0k3n-value", "abcdefghijk", "eyJhbGciOi", API_KEY, "hunter2"):
        assert secret not in line, secret
    assert "[hidden]" in entry["message"] and "RuntimeError" in entry["error"]


def test_a_served_instances_json_logs_follow_a_turn_and_hold_no_secret(tmp_path, make_instance, scripted):
    data = small_archive(tmp_path, make_instance, {"alice": PASSWORD})
    scripted.answer_probes = True
    scripted.enqueue(tool_call("search_papers", query="citation graph"), text("SPECTER uses citations [1]."),
                     text("SPECTER uses citations [1]."),  # sent back once by the check of cited sentences
                     failure(401, message=f"Incorrect API key provided: {API_KEY}"))  # fmt: skip
    try:
        with served(data, SCHOLARLOOM_LOG_FORMAT="json", SCHOLARLOOM_LOG_LEVEL="info", SCHOLARLOOM_LLM="openai/scripted",
                    SCHOLARLOOM_LLM_API_BASE=scripted.api_base, SCHOLARLOOM_LLM_API_KEY=API_KEY) as (base, process):  # fmt: skip
            refused = httpx.post(f"{base}/chat/login", data={"username": "alice", "password": PASSWORD + "x"})
            assert refused.status_code == 401
            asked = httpx.get(f"{base}/readyz", headers={"X-Request-ID": "probe-42"})
            assert asked.headers["x-request-id"] == "probe-42"

            async def chat():
                client = ChatClient(base, "alice")
                await client.connect()
                await client.ask("How does SPECTER use the citation graph?")
                await client.ask("And what about its training data?")  # the model refuses the key: a warning
                await client.sio.disconnect()

            asyncio.run(chat())
            log = process.log
            children = [Path(f"/proc/{c}/cmdline").read_bytes() for task in Path(f"/proc/{process.pid}/task").iterdir()
                        for c in (task / "children").read_text().split()]  # fmt: skip
            assert any(b"spawn_main" in c for c in children)  # the model's requests: in a process of their own
    finally:
        scripted.answer_probes = False
    written = log.read_text()
    secret = (data / "demo-auth-secret").read_text().strip()
    for hidden in (PASSWORD, secret, API_KEY):
        assert hidden not in written
    entries = [json.loads(line) for line in written.splitlines() if line.startswith("{")]
    assert entries and all({"at", "level", "logger", "request_id", "message"} <= e.keys() for e in entries)
    turns: dict[str, set[str]] = {}
    for entry in entries:
        if entry["request_id"].startswith("turn-"):
            turns.setdefault(entry["request_id"], set()).add(entry["logger"])
    assert any({"assistant.turn", "assistant.agent"} <= loggers for loggers in turns.values()), turns
    assert any({"assistant.agent", "LiteLLM"} <= loggers for loggers in turns.values()), turns  # the child's too
    failed = [e for e in entries if e["logger"] == "assistant.agent" and e["level"] == "WARNING"]
    assert failed and failed[0]["request_id"].startswith("turn-") and "refused the API key" in failed[0]["message"]
    plain = [line for line in written.splitlines() if line.strip() and not line.startswith("{")]
    assert all(line.startswith(("ScholarLoom on http", "warning: demo mode")) for line in plain), plain  # the CLI's own
