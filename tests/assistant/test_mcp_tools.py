"""The MCP server's tools (`assistant.mcp_server`) through the official MCP client, over the SDK's in-memory
transport on the demo: the same names, descriptions and input schemas as the chat agent's tools; each tool called
once, answering as text and as structured content its output schema accepts; a failure is an error result whose
text says what failed; papers read as resources; each user's calls take turns, and a full line is answered in words.
(Over streamable HTTP, with tokens, against a served instance: `tests/scholarloom/test_mcp_serve.py`.)"""

from __future__ import annotations

import re

import anyio
import jsonschema
from mcp.shared.memory import create_connected_server_and_client_session

from assistant.mcp_server import MCP_TOOLS, OUTPUT_SCHEMA, build_server, paper_uri
from assistant.tools import TOOLS, tool_schema
from common.admission import Admission, Limits

BASE = "https://papers.example.org"
TRIPPY = "2005.02877"


def _session(demo, user: str | None = "ola", library=lambda _user: [], admission: Admission | None = None):
    server = build_server(demo.archive(), BASE, lambda _server: user, library, admission)
    return create_connected_server_and_client_session(server)


def test_the_tools_are_the_agents_and_each_answers_as_text_and_structured_content(demo):
    async def scenario():
        async with _session(demo, library=lambda user: [TRIPPY] if user == "ola" else []) as session:
            listed = {t.name: t for t in (await session.list_tools()).tools}
            calls = {
                "search_papers": {"query": "dialog state tracking"},
                "search_fulltext": {"query": "joint goal accuracy on MultiWOZ 2.1"},
                "get_paper": {"paper_id": TRIPPY},
                "get_references": {"paper_id": TRIPPY},
                "get_cited_by": {"paper_id": TRIPPY},
                "similar_papers": {"paper_id": TRIPPY, "limit": 3},
                "compare_papers": {"paper_ids": [TRIPPY, "2005.07362"], "aspects": ["method"]},
                "find_researcher": {"name": "Bobby Yan"},
                "find_institution": {"institution": "Stanford University"},
                "get_institution": {"institution": "Stanford University"},
                "summarize_institution": {"institution": "Stanford University"},
                "get_my_library": {},
                "check_claim": {"paper_id": TRIPPY, "sentence": "TripPy uses a triple copy strategy for dialog state "
                                                                "tracking."},
            }
            results = {name: await session.call_tool(name, arguments) for name, arguments in calls.items()}
            researcher = next(c for c in results["find_researcher"].structuredContent["cards"]
                              if c["kind"] == "researcher")  # fmt: skip
            number = int(researcher["url"].split("/researchers/")[1].split("-")[0])
            for name in ("get_researcher", "summarize_researcher"):
                results[name] = await session.call_tool(name, {"researcher_id": number})
            failed = await session.call_tool("get_paper", {"paper_id": "9999.99999"})
            invalid = await session.call_tool("search_papers", {"limit": "many"})
            unknown = await session.call_tool("delete_everything", {})
            page = await session.read_resource(paper_uri(TRIPPY))
            templates = await session.list_resource_templates()
            resources = await session.list_resources()
            return listed, results, failed, invalid, unknown, page, templates, resources

    listed, results, failed, invalid, unknown, page, templates, resources = anyio.run(scenario)
    assert list(listed) == [fn.__name__ for fn in MCP_TOOLS] and len(MCP_TOOLS) == len(TOOLS) + 1
    for fn in MCP_TOOLS:
        schema = tool_schema(fn)["function"]
        tool = listed[fn.__name__]
        assert (tool.description, tool.inputSchema) == (schema["description"], schema["parameters"])
        assert tool.annotations.readOnlyHint and tool.outputSchema == OUTPUT_SCHEMA
    assert set(results) == set(listed)  # each tool called
    for name, result in results.items():
        assert not result.isError, (name, result.content[0].text)
        jsonschema.validate(result.structuredContent, OUTPUT_SCHEMA)
        assert result.content[0].text == result.structuredContent["text"], name
    cards = results["search_papers"].structuredContent["cards"]
    assert cards[0]["id"] == TRIPPY and cards[0]["number"] == 1
    assert cards[0]["url"].startswith(f"{BASE}/papers/{TRIPPY}-trippy")
    assert "[1] TripPy" in results["search_papers"].content[0].text
    assert any(q["page"] for c in results["search_fulltext"].structuredContent["cards"] for q in c["quotes"])
    assert "Stanford University" in results["get_institution"].content[0].text
    assert "TripPy" in results["get_my_library"].content[0].text  # the library the server was given, for ola
    assert results["check_claim"].content[0].text.startswith("Found in [1] (")  # the check, for outside agents
    assert failed.isError and "no paper with id '9999.99999'" in failed.content[0].text
    assert invalid.isError and "invalid arguments for search_papers" in invalid.content[0].text
    assert unknown.isError and "no tool named 'delete_everything'" in unknown.content[0].text
    text = page.contents[0].text
    assert page.contents[0].mimeType == "text/markdown" and text.startswith("# TripPy: A Triple Copy Strategy")
    assert templates.resourceTemplates[0].uriTemplate == "scholarloom://papers/{paper_id}"
    assert [str(r.uri) for r in resources.resources] == [paper_uri(TRIPPY)]


def test_without_a_user_nothing_is_answered(demo):
    async def scenario():
        async with _session(demo, user=None) as session:
            return await session.call_tool("search_papers", {"query": "dialog"})

    refused = anyio.run(scenario)
    assert refused.isError and refused.content[0].text == "Error: no user: send a personal API token"


def test_a_users_calls_take_turns_and_a_full_line_is_answered_in_words(demo):
    """One turn per user under the global cap: while ola holds hers (a call of hers in progress), her next call waits
    and pia's goes on; past the line's length a call is answered at once, in words with a time to try again; ola's
    waiting call is answered once her turn is free."""
    admission = Admission("mcp", Limits(at_once=2, per_user=1, queue=1), noun="call")
    found: dict = {}

    async def ask(session, key: str) -> None:
        found[key] = await session.call_tool("get_paper", {"paper_id": TRIPPY})

    async def scenario():
        async with _session(demo, "ola", admission=admission) as ola, \
                _session(demo, "pia", admission=admission) as pia, anyio.create_task_group() as group:  # fmt: skip
            async with admission.slot("ola"):
                group.start_soon(ask, ola, "waited")
                with anyio.fail_after(10):
                    while admission.snapshot().waiting < 1:
                        await anyio.sleep(0)
                await ask(pia, "other")  # answered while ola's call waits
                await ask(ola, "refused")  # the line (one long) is full
                assert "waited" not in found
                found["while"] = admission.snapshot()

    anyio.run(scenario)
    assert not found["other"].isError and "TripPy" in found["other"].content[0].text
    refused = found["refused"]
    said = re.fullmatch(r"Error: The server is busy: every turn is taken and 1 call is already waiting\. "
                        r"Try again in (\d+) s\.", refused.content[0].text)  # fmt: skip
    assert refused.isError and said and refused.meta == {"retryAfterSeconds": int(said[1])}
    assert not found["waited"].isError and "TripPy" in found["waited"].content[0].text
    assert (found["while"].running, found["while"].waiting) == (1, 1)  # ola's turn held, her call in line
    assert admission.snapshot().refused["queue_full"] == 1 and admission.snapshot().running == 0


async def test_the_endpoint_takes_post_only_when_stateless(demo):
    """Stateless (how `/mcp` is served), a GET would hold an event stream open and a DELETE has no session: 405 with
    Allow, before any token is looked at; with sessions the protocol's GET and DELETE are the endpoint's too."""
    import httpx

    from assistant.mcp_server import McpEndpoint

    server = build_server(demo.archive(), BASE, lambda _server: "ola")
    endpoint = McpEndpoint(server)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=endpoint), base_url="http://test") as client:
        with anyio.fail_after(10):
            get, delete = await client.get("/mcp"), await client.delete("/mcp")
    for refused in (get, delete):
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
        assert refused.json()["detail"] == "/mcp takes POST only."
    assert McpEndpoint(server, stateless=False).methods == ("GET", "POST", "DELETE")
