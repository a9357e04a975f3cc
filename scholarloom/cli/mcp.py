"""`scholarloom mcp`: the MCP tools over standard input and output, for a local client (Claude Desktop, an IDE
assistant) that starts the command, as the user whose personal API token it is given (`assistant.mcp_server`)."""

from __future__ import annotations

from contextlib import closing

import typer

from scholarloom.cli.common import app, fail, load_settings


@app.command("mcp")
def mcp_stdio(
    token: str = typer.Option(None, envvar="SCHOLARLOOM_TOKEN", show_default=False,
                              help="Your personal API token (make one on /me/tokens)."),  # fmt: skip
    url: str = typer.Option(None, show_default=False, help="A running server's MCP address (https://host/mcp) to "
                            "pass requests on to. Default: this data directory's archive, or, while `scholarloom "
                            "serve` holds it, the server's own /mcp (SCHOLARLOOM_PUBLIC_URL)."),  # fmt: skip
) -> None:
    """Serve the MCP tools over standard input and output, as the user whose token is given (nothing is written
    to standard output but the protocol: logs go to standard error)."""
    import logging

    import anyio

    from assistant.mcp_server import bridge_stdio, build_server, serve_stdio
    from common.logs import configure as configure_logs

    if not token:
        fail("give your personal API token (--token or SCHOLARLOOM_TOKEN): make one on your server's /me/tokens page")
    if url:
        anyio.run(bridge_stdio, url, token)
        return
    from auth.tokens import check
    from retrieval.vectors.store import IndexUnavailable

    with closing(load_settings()) as settings:
        configure_logs(settings.log_format == "json", settings.secret_values() + [token], logging.WARNING)
        engine = settings.catalog().engine
        use = check(engine, token)
        if use is None:
            fail("this token is unknown, revoked or expired here: make one on /me/tokens")
        try:
            archive = settings.archive()
            archive.index.count()
        except IndexUnavailable:  # `scholarloom serve` holds the archive: ask it
            address = settings.base_url + "/mcp"
            typer.echo(f"the server holds this archive: passing requests on to {address}", err=True)
            anyio.run(bridge_stdio, address, token)
            return

        def user_of(_server) -> str | None:  # checked on every request: a token revoked meanwhile stops at once
            found = check(engine, token)
            return found.username if found else None

        server = build_server(archive, settings.base_url, user_of, settings.uploads().library_ids)
        typer.echo(f"ScholarLoom MCP over stdio, as {use.username}", err=True)
        anyio.run(serve_stdio, server)
