"""The MCP server at /mcp of a running `scholarloom serve`, through the official MCP client over streamable HTTP
with personal API tokens: the tools are the agent's; a missing, unknown, revoked or expired token is refused; a
user's token reaches their own upload (added with a library token, no cookie) and another user's never does. In
process, through the app's ASGI interface: only POST in stateless mode, and a call past the full line of turns
answered in words and counted in /metrics."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from sqlalchemy import text

from assistant.mcp_server import MCP_TOOLS, paper_uri
from assistant.tools import tool_schema
from auth.tokens import create_token, revoke
from harness.serve import child_environment
from tests.scholarloom.test_library_serve import _upload_and_wait

SCHOLARLOOM = Path(sys.executable).with_name("scholarloom")
QUESTION = "guidelines for human evaluation of faithfulness in long-form summarization"
EACH = {  # the other tools' arguments on the small archive (the researcher's tools follow find_researcher)
    "search_papers": {"query": "dialog state tracking"},
    "search_fulltext": {"query": "joint goal accuracy"},
    "get_paper": {"paper_id": "2005.02877"},
    "get_references": {"paper_id": "2005.02877"},
    "get_cited_by": {"paper_id": "2005.02877"},
    "similar_papers": {"paper_id": "2005.02877", "limit": 3},
    "compare_papers": {"paper_ids": ["2005.02877", "2005.07362"], "aspects": ["method"]},
    "find_researcher": {"name": "Michael Heck"},
    "find_institution": {"institution": "Heinrich Heine University"},
    "get_institution": {"institution": "Heinrich Heine University"},
    "summarize_institution": {"institution": "Heinrich Heine University"},
    "get_my_library": {},
    "check_claim": {"paper_id": "2005.02877", "sentence": "TripPy uses a triple copy strategy for dialog state tracking."},
}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}}


@pytest.fixture
def engine(small_server):
    from scholarloom.settings import Settings

    engine = Settings(data_dir=small_server.data).catalog().engine
    yield engine
    engine.dispose()


@asynccontextmanager
async def mcp(base: str, token: str):
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=300))
    async with http, streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def _raw(base: str, token: str | None) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        return await http.post("/mcp", json=INITIALIZE, headers=headers)


async def _upload(base: str, token: str, folder) -> dict:
    """The LongEval paper's first pages, added to the owner's library with their library token (no cookie)."""
    return await _upload_and_wait(base, "", folder, headers={"Authorization": f"Bearer {token}"})


def test_mcp_over_streamable_http_with_tokens(small_server, engine, tmp_path):
    from tests.small_archive import new_user_on

    base = small_server.base
    for name in ("hal", "ivy"):  # users of their own (the shared server's others have uploads and lists of theirs)
        new_user_on(small_server.data, name)
    _, reader = create_token(engine, "hal", "claude desktop")
    _, owner = create_token(engine, "ivy", "uploads", scope="library")
    gone, revoked = create_token(engine, "hal", "old laptop")
    revoke(engine, gone.id, by="hal")
    late, expired = create_token(engine, "hal", "a month", days=30)
    with engine.begin() as connection:
        connection.execute(text("UPDATE api_tokens SET expires_at = :past WHERE id = :id"),
                           {"past": datetime.now(timezone.utc) - timedelta(minutes=1), "id": late.id})  # fmt: skip

    async def scenario():
        refusals = {name: await _raw(base, token) for name, token in
                    (("missing", None), ("unknown", "sl_" + "a" * 43), ("revoked", revoked), ("expired", expired))}
        item = await _upload(base, owner, tmp_path)
        upload = f"upload:{item['id']}"
        async with mcp(base, reader) as session:
            tools = (await session.list_tools()).tools
            found = await session.call_tool("search_papers", {"query": "dialog state tracking"})
            hers = await session.call_tool("search_fulltext", {"query": QUESTION})
            direct = await session.call_tool("get_paper", {"paper_id": upload})
            library = await session.call_tool("get_my_library", {})
            each = {name: await session.call_tool(name, arguments) for name, arguments in EACH.items()}
            heck = next(c for c in each["find_researcher"].structuredContent["cards"] if c["kind"] == "researcher")
            number = int(heck["url"].split("/researchers/")[1].split("-")[0])
            for name in ("get_researcher", "summarize_researcher"):
                each[name] = await session.call_tool(name, {"researcher_id": number})
            with pytest.raises(McpError, match="no paper"):
                await session.read_resource(paper_uri(upload))
            page = await session.read_resource(paper_uri("2005.02877"))
        async with mcp(base, owner) as session:
            own = await session.call_tool("get_my_library", {})
            searched = await session.call_tool("search_fulltext", {"query": QUESTION})
            read = await session.read_resource(paper_uri(upload))
        return refusals, item, tools, found, hers, direct, library, page, own, searched, read, each

    refusals, item, tools, found, hers, direct, library, page, own, searched, read, each = asyncio.run(scenario())
    assert set(each) == {fn.__name__ for fn in MCP_TOOLS}  # every tool called over HTTP
    for name, result in each.items():  # (the small archive holds no institution: the demo's are called in
        said = result.content[0].text  # tests/assistant/test_mcp_tools.py)
        if name in ("get_institution", "summarize_institution"):
            assert result.isError and said == "Error: no institution matches 'Heinrich Heine University'", name
        else:
            assert not result.isError and result.structuredContent["text"] == said, (name, said)
    assert "Michael Heck has 1 paper in this archive" in each["summarize_researcher"].content[0].text
    for name, answer in refusals.items():
        assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer"), name
    assert "make one on /me/tokens" in refusals["missing"].json()["detail"]
    assert refusals["revoked"].json()["detail"] == "This token is unknown, revoked or expired."

    assert [(t.name, t.inputSchema) for t in tools] == [
        (fn.__name__, tool_schema(fn)["function"]["parameters"]) for fn in MCP_TOOLS]
    assert not found.isError and found.structuredContent["cards"][0]["id"] == "2005.02877"
    assert found.structuredContent["cards"][0]["url"].startswith(f"{base}/papers/2005.02877")
    assert "TripPy" in page.contents[0].text

    upload = f"upload:{item['id']}"
    seen_by_reader = " ".join(r.content[0].text for r in (hers, library))
    assert upload not in seen_by_reader and "Kalpesh" not in seen_by_reader and "/me/library/" not in seen_by_reader
    # (the answer for a paper that does not exist, naming only the id she asked for)
    assert direct.isError and direct.content[0].text == (f"Error: no paper with id {upload!r} in this archive; "
                                                         "search for it by title instead")  # fmt: skip
    assert "library is empty" in library.content[0].text

    assert [c["id"] for c in own.structuredContent["cards"]] == [upload]
    assert own.structuredContent["cards"][0]["kind"] == "upload"
    cards = searched.structuredContent["cards"]
    assert cards[0]["id"] == upload and cards[0]["quotes"][0]["page"], cards
    assert read.contents[0].text.startswith("# LongEval")


@asynccontextmanager
async def stdio(data_dir, token: str | None, **env: str):
    """`scholarloom mcp` started by the official client over stdio, as Claude Desktop starts it."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    environment = child_environment(data_dir, **env, **({"SCHOLARLOOM_TOKEN": token} if token else {}))
    command = StdioServerParameters(command=str(SCHOLARLOOM), args=["mcp"], env=environment)
    async with stdio_client(command, errlog=open(os.devnull, "w")) as (read, write):  # noqa: SIM115
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def test_scholarloom_mcp_over_stdio_passes_on_to_the_server_that_holds_the_archive(small_server, engine):
    """The server holds the archive (the index's one process): the command asks the server's /mcp, as the user."""
    from tests.small_archive import new_user_on

    new_user_on(small_server.data, "jay")
    _, alice = create_token(engine, "jay", "stdio")

    async def scenario():
        async with stdio(small_server.data, alice, SCHOLARLOOM_PUBLIC_URL=small_server.base) as session:
            tools = (await session.list_tools()).tools
            found = await session.call_tool("search_papers", {"query": "dialog state tracking"})
            library = await session.call_tool("get_my_library", {})
            return tools, found, library

    tools, found, library = asyncio.run(scenario())
    assert [t.name for t in tools] == [fn.__name__ for fn in MCP_TOOLS]
    assert found.structuredContent["cards"][0]["id"] == "2005.02877"
    assert "library is empty" in library.content[0].text  # jay's own


def test_scholarloom_mcp_over_stdio_on_its_own_archive_and_a_bad_token(make_instance, tmp_path):
    from auth.tokens import revoke_all
    from tests.chat_server import PASSWORD
    from tests.small_archive import small_archive

    data = small_archive(tmp_path, make_instance, {"erin": PASSWORD})
    settings = make_instance(data)
    _, erin = create_token(settings.catalog().engine, "erin", "laptop")

    async def scenario():
        async with stdio(data, erin) as session:
            found = await session.call_tool("search_papers", {"query": "dialog state tracking"})
            page = await session.read_resource(paper_uri("2005.02877"))
            revoke_all(settings.catalog().engine, "erin", by="erin")
            after = await session.call_tool("search_papers", {"query": "dialog state tracking"})
        return found, page, after

    try:
        found, page, after = asyncio.run(scenario())
        refused = subprocess.run([str(SCHOLARLOOM), "mcp"], env=child_environment(data, SCHOLARLOOM_TOKEN=erin),
                                 capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    finally:
        settings.close()
    assert found.structuredContent["cards"][0]["id"] == "2005.02877" and "TripPy" in page.contents[0].text
    assert after.isError and "send a personal API token" in after.content[0].text  # revoked mid-session: at once
    assert refused.returncode == 1 and "unknown, revoked or expired" in refused.stderr and refused.stdout == ""


@asynccontextmanager
async def in_process(demo, **changes):
    """The pages app over the demo (its MCP server running, as under `serve`), made with these settings changed, and
    a token of lena's."""
    from tests.web.test_follow import app_with_users

    before = {name: getattr(demo, name) for name in changes}
    for name, value in changes.items():
        setattr(demo, name, value)
    try:
        app = app_with_users(demo, "lena")
    finally:
        for name, value in before.items():
            setattr(demo, name, value)
    _, token = create_token(demo.catalog().engine, "lena", "probe")
    transport = httpx.ASGITransport(app=app, client=("198.51.100.20", 40000))
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://test",
                                                                   headers=headers) as client:  # fmt: skip
        yield app, client


async def test_stateless_mcp_takes_post_only(demo):
    """A GET would open an event stream that nothing is sent on, kept open by pings; a DELETE has no session to end."""
    async with in_process(demo) as (_, client):
        with anyio.fail_after(20):  # (before: the GET's stream never ends)
            get = await client.get("/mcp")
            delete = await client.delete("/mcp")
            post = await client.post("/mcp", json=INITIALIZE)
    for refused in (get, delete):  # (OPTIONS, answered for every path, may be listed too: `web.protocol`)
        allowed = set(refused.headers["allow"].split(", "))
        assert refused.status_code == 405 and allowed - {"OPTIONS"} == {"POST"}, refused.headers
    assert post.status_code == 200 and post.json()["result"]["serverInfo"]["name"] == "scholarloom"


async def test_a_call_past_the_full_line_is_answered_in_words_and_counted(demo):
    from pydantic import SecretStr

    from scholarloom.settings import AdmissionLimits

    scraper = "m" * 40
    limits = AdmissionLimits(at_once=1, per_user=1, queue=0)
    async with in_process(demo, mcp=limits, metrics_token=SecretStr(scraper)) as (app, client):
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "get_paper", "arguments": {"paper_id": "2005.02877"}}}  # fmt: skip
        with anyio.fail_after(20):
            async with app.state.mcp_admission.slot("someone else"):  # the one turn, taken
                busy = await client.post("/mcp", json=call)
            answered = await client.post("/mcp", json=call)
            metrics = await client.get("/metrics", headers={"Authorization": f"Bearer {scraper}"})
    result = busy.json()["result"]
    assert busy.status_code == 200 and result["isError"] and result["_meta"] == {"retryAfterSeconds": 1}
    assert result["content"][0]["text"] == "Error: The server is busy: every turn is taken. Try again in 1 s."
    assert not answered.json()["result"]["isError"]
    assert 'scholarloom_admission_refused_total{kind="mcp",reason="queue_full"} 1.0' in metrics.text
    assert 'scholarloom_admission_admitted_total{kind="mcp"} 2.0' in metrics.text
    assert 'scholarloom_admission_waiting{kind="mcp"} 0.0' in metrics.text
