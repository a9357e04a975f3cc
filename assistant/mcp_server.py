"""The Model Context Protocol server: the chat agent's read-only tools for any MCP client (Claude Desktop, IDE
assistants, other agents), with the same names, descriptions and input schemas (`tool_schema`), and the user's own
library besides (`get_my_library`).

Each call runs as one user: the owner of the personal API token the request carries (over streamable HTTP at
`/mcp`, checked by `auth.middleware.BearerTokens` before anything here runs), or the token given to `scholarloom mcp`
(over stdio). A tool sees that user's uploads and library and nobody else's: the same `ToolDeps.user` rule as the
chat. A result is the tool's text (markdown, what the chat's model reads) and structured content: its cards, each
with the absolute address of its page. Papers are also resources (`scholarloom://papers/{id}`: the paper's page as
markdown), and the user's library is listed as resources.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import asynccontextmanager
from urllib.parse import quote, unquote

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError

from assistant.tools import TOOLS, Card, ToolDeps, ToolError, call_tool, tool_schema
from assistant.tools.library import get_my_library
from assistant.tools.papers import OwnUpload
from common.admission import Admission, Busy, Limits
from retrieval.archive import Archive
from retrieval.library.visible import upload_number
from pages.paper import paper_page

log = logging.getLogger(__name__)

MCP_TOOLS = (*TOOLS, get_my_library)
BY_NAME = {fn.__name__: fn for fn in MCP_TOOLS}
PAPER_URI = "scholarloom://papers/"
LISTED = 100  # library items listed as resources
BUSY = -32000  # JSON-RPC's range for a server's own errors: no turn for this request now (`common.admission`)

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The result as markdown (what the chat's model reads)."},
        "cards": {
            "type": "array",
            "description": "The papers, researchers, institutions or pictures the result names, best first.",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["paper", "upload", "researcher", "institution", "compare",
                                                       "graph"]},  # fmt: skip
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "url": {"type": "string", "description": "Its page on this server."},
                    "subtitle": {"type": "string"},
                    "number": {"type": ["integer", "null"], "description": "Its citation number [n], if any."},
                    "quotes": {"type": "array", "items": {"type": "object", "properties": {
                        "text": {"type": "string"}, "page": {"type": ["integer", "null"]}}}},
                },
                "required": ["kind", "id", "title", "url"],
            },
        },
    },
    "required": ["text", "cards"],
}  # fmt: skip
INSTRUCTIONS = (
    "ScholarLoom: a self-hosted archive of research papers (arXiv abstracts and full text), researchers, "
    "institutions and citations. Search with search_papers (abstracts) or search_fulltext (passages of the PDFs); "
    "read a paper with get_paper; follow citations with get_references and get_cited_by; compare papers with "
    "compare_papers; look people up with find_researcher and find_institution; get_my_library searches your own "
    "library. Cite papers by the [n] numbers results give, with their page addresses. When a result says nothing "
    "clears the relevance floor, the archive does not answer the question well: say so."
)


def mcp_tools() -> list[types.Tool]:
    """The tools as MCP lists them: each one's schema is the agent's (`tool_schema`)."""
    tools = []
    for fn in MCP_TOOLS:
        schema = tool_schema(fn)["function"]
        tools.append(types.Tool(
            name=schema["name"], description=schema["description"], inputSchema=schema["parameters"],
            outputSchema=OUTPUT_SCHEMA,
            annotations=types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False),
        ))  # fmt: skip
    return tools


def card_json(card: Card, base_url: str) -> dict:
    return {"kind": str(card.kind), "id": card.id, "title": card.title, "url": base_url + card.path,
            "subtitle": card.subtitle, "number": card.number,
            "quotes": [{"text": q.text, "page": q.page} for q in card.quotes]}  # fmt: skip


def paper_uri(paper_id: str) -> str:
    return PAPER_URI + quote(paper_id, safe=":")


def build_server(archive: Archive, base_url: str, user_of: Callable[[Server], str | None],
                 library_ids: Callable[[str], list[str]] | None = None, admission: Admission | None = None) -> Server:
    """The MCP server over `archive`. `user_of(server)` names the user a request acts for (None: refused). Each
    call that reads the archive takes a turn of `admission` as its user (default: the settings' default limits)."""
    server: Server = Server("scholarloom", version="0.1.0", instructions=INSTRUCTIONS, website_url=base_url)
    tools = mcp_tools()
    admission = admission or Admission("mcp", Limits(), noun="call")

    def deps() -> ToolDeps:
        user = user_of(server)
        if user is None:  # (the HTTP endpoint refuses a request without a token before this)
            raise PermissionError("no user: send a personal API token")
        return ToolDeps(archive, user=user, library_ids=library_ids)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools

    @server.call_tool(validate_input=False)  # the tool's own validation, with the messages the agent reads
    async def call(name: str, arguments: dict) -> types.CallToolResult:
        fn = BY_NAME.get(name)
        if fn is None:
            return _error(f"Error: no tool named {name[:100]!r}; the tools are {', '.join(BY_NAME)}.")
        try:
            own = deps()
        except PermissionError as refused:
            return _error(f"Error: {refused}")
        return await _run_tool(fn, own, arguments, admission, base_url)

    @server.list_resource_templates()
    async def templates() -> list[types.ResourceTemplate]:
        return [_paper_template()]

    @server.list_resources()
    async def resources() -> list[types.Resource]:
        own = deps()
        if own.library_ids is None:
            return []
        ids = own.library_ids(own.user)[:LISTED]
        async with _turn(admission, own.user):
            found = await anyio.to_thread.run_sync(archive.papers, ids, own.user)
        return [types.Resource(uri=paper_uri(i), name=found[i].title[:200], mimeType="text/markdown",
                               description="In your library") for i in ids if i in found]  # fmt: skip

    @server.read_resource()
    async def read(uri) -> list[ReadResourceContents]:
        text = str(uri)
        if not text.startswith(PAPER_URI):
            raise ValueError(f"unknown resource {text[:200]!r}: papers are {PAPER_URI}<id>")
        own = deps()
        async with _turn(admission, own.user):
            page = await anyio.to_thread.run_sync(_page_markdown, archive, unquote(text[len(PAPER_URI):]), own.user)
        if page is None:
            raise ValueError(f"no paper {text[len(PAPER_URI):][:100]!r} in this archive")
        return [ReadResourceContents(content=page, mime_type="text/markdown")]

    return server


def _paper_template() -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uriTemplate=PAPER_URI + "{paper_id}", name="paper", title="A paper's page",
        description="A paper's page as markdown: title, authors, abstract, links, references. The id as search "
                    "results give it (an arXiv id, openalex:W..., or upload:<n> for one of your own PDFs).",
        mimeType="text/markdown")  # fmt: skip


async def _run_tool(fn, own: ToolDeps, arguments: dict, admission: Admission, base_url: str) -> types.CallToolResult:
    """One call in a turn of its user's: the tool's text and cards, or its error; refused a turn, the refusal."""
    try:
        async with admission.slot(own.user):
            result = await anyio.to_thread.run_sync(call_tool, fn, own, arguments)
    except Busy as busy:
        log.warning("mcp tool %s for %s refused: %s", fn.__name__, own.user, busy.reason)
        return _busy(busy)
    log.info("mcp tool %s for %s%s", fn.__name__, own.user, " (failed)" if result.failed else "")
    if result.failed:
        return _error(result.output)
    structured = {"text": result.output, "cards": [card_json(c, base_url) for c in result.cards]}
    return types.CallToolResult(content=[types.TextContent(type="text", text=result.output)],
                                structuredContent=structured)  # fmt: skip


def _page_markdown(archive: Archive, paper_id: str, user: str | None) -> str | None:
    """A paper's page as markdown; an upload for its owner only (anyone else: as if it did not exist)."""
    if upload_number(paper_id) is not None:
        paper = archive.papers([paper_id], user).get(paper_id) if user else None
        return OwnUpload(paper).to_markdown() if paper else None
    page = paper_page(archive, paper_id)
    return page.to_markdown() if page else None


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


def _busy(busy: Busy) -> types.CallToolResult:
    """A refused call as a tool's error: words the model reads and can act on (clients show a tool error to the
    model; an HTTP 429 or 503 would fail the client's whole request, or its transport), the wait in `_meta` too."""
    result = _error(f"Error: {busy}")
    result.meta = {"retryAfterSeconds": busy.retry_after}
    return result


@asynccontextmanager
async def _turn(admission: Admission, user: str):
    """A turn for a resource request; refused, the JSON-RPC error says so in words (and the wait, in its data)."""
    try:
        async with admission.slot(user):
            yield
    except Busy as busy:
        log.warning("mcp resource request for %s refused: %s", user, busy.reason)
        raise McpError(types.ErrorData(code=BUSY, message=str(busy),
                                       data={"retryAfterSeconds": busy.retry_after})) from None  # fmt: skip


def token_user(server: Server) -> str | None:
    """Over HTTP: the user whose token the request carried (`BearerTokens` put it in the request's state)."""
    request = server.request_context.request
    return request.scope.get("state", {}).get("token_user") if request is not None else None


class McpEndpoint:
    """`/mcp` as an ASGI app: streamable HTTP (stateless by default, JSON answers), for requests that carry a valid
    token; anything else gets 401 and where to make a token. Stateless, only POST has a meaning: a GET would open an
    event stream nothing is ever sent on (kept open by pings) and a DELETE has no session to end, so both are 405
    (`methods`, which the app's route takes too); with sessions, GET and DELETE are the protocol's."""

    def __init__(self, server: Server, stateless: bool = True) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.methods = ("POST",) if stateless else ("GET", "POST", "DELETE")
        self.manager = StreamableHTTPSessionManager(app=server, stateless=stateless, json_response=True)

    async def __call__(self, scope, receive, send) -> None:
        if scope.get("method") not in self.methods:
            return await _answer(send, 405, f"/mcp takes {' and '.join(self.methods)} only.",
                                 [(b"allow", ", ".join(self.methods).encode())])  # fmt: skip
        if not scope.get("state", {}).get("token_user"):
            return await _answer(send, 401, "The MCP server needs a personal API token: make one on /me/tokens and "
                                 "send it as 'Authorization: Bearer sl_...'.",
                                 [(b"www-authenticate", b'Bearer realm="scholarloom"')])  # fmt: skip
        await self.manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def running(self):
        async with self.manager.run():
            yield


async def _answer(send, status: int, detail: str, headers: list[tuple[bytes, bytes]]) -> None:
    import json

    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"cache-control", b"no-store"), *headers]})  # fmt: skip
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})


async def serve_stdio(server: Server) -> None:
    """Serve `server` over this process's standard input and output (a local client starts the process)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def bridge_stdio(url: str, token: str) -> None:
    """Serve over standard input and output what the MCP server at `url` (a running `scholarloom serve`'s /mcp)
    answers with `token`: for a local client while the server holds the archive. Every request is passed on as it
    is; the server's answer (or its error) comes back unchanged."""
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=300))
    async with http, streamable_http_client(url, http_client=http) as (read, write, _):
        async with ClientSession(read, write) as remote:
            hello = await remote.initialize()
            server: Server = Server(hello.serverInfo.name, version=hello.serverInfo.version,
                                    instructions=hello.instructions)  # fmt: skip

            @server.list_tools()
            async def list_tools() -> list[types.Tool]:
                return (await remote.list_tools()).tools

            @server.call_tool(validate_input=False)
            async def call(name: str, arguments: dict) -> types.CallToolResult:
                return await remote.call_tool(name, arguments)

            @server.list_resource_templates()
            async def templates() -> list[types.ResourceTemplate]:
                return (await remote.list_resource_templates()).resourceTemplates

            @server.list_resources()
            async def resources() -> list[types.Resource]:
                return (await remote.list_resources()).resources

            @server.read_resource()
            async def read_resource(uri) -> list[ReadResourceContents]:
                answer = await remote.read_resource(uri)
                return [ReadResourceContents(content=c.text, mime_type=c.mimeType) for c in answer.contents
                        if isinstance(c, types.TextResourceContents)]  # fmt: skip

            await serve_stdio(server)


__all__ = ["MCP_TOOLS", "McpEndpoint", "ToolError", "bridge_stdio", "build_server", "mcp_tools", "serve_stdio",
           "token_user"]
