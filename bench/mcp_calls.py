"""What the MCP layer adds to a tool call (issue 41): the same tool called directly (`call_tool`, what the chat's agent
does) and through the official MCP client over the SDK's in-memory transport (`assistant.mcp_server`: JSON-RPC, the
schema, the structured content), on the demo archive. The HTTP hop and the token check are not in these figures.

    .venv/bin/python -m bench.mcp_calls --data-dir /tmp/j42 --calls 40

Prints the median and p95 milliseconds of each, per tool, after two warm-up calls.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from assistant.mcp_server import BY_NAME, build_server
from assistant.tools import ToolDeps, call_tool
from scholarloom.settings import Settings

CALLS = {
    "search_papers": {"query": "dialog state tracking"},
    "search_fulltext": {"query": "joint goal accuracy on MultiWOZ 2.1"},
    "get_paper": {"paper_id": "2005.02877"},
    "get_cited_by": {"paper_id": "2004.07180"},
}


def _summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[max(0, round(0.95 * len(ordered)) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    archive = settings.archive()
    try:
        direct: dict[str, list[float]] = {}
        for name, arguments in CALLS.items():
            for n in range(args.calls + 2):
                start = time.perf_counter()
                result = call_tool(BY_NAME[name], ToolDeps(archive, user="bench"), arguments)
                if n >= 2:
                    direct.setdefault(name, []).append(time.perf_counter() - start)
                assert not result.failed, result.output

        async def through_mcp() -> dict[str, list[float]]:
            found: dict[str, list[float]] = {}
            server = build_server(archive, "http://127.0.0.1:8000", lambda _server: "bench")
            async with create_connected_server_and_client_session(server) as session:
                for name, arguments in CALLS.items():
                    for n in range(args.calls + 2):
                        start = time.perf_counter()
                        result = await session.call_tool(name, arguments)
                        if n >= 2:
                            found.setdefault(name, []).append(time.perf_counter() - start)
                        assert not result.isError, result.content[0].text
            return found

        mcp = anyio.run(through_mcp)
    finally:
        settings.close()
    print(f"{args.calls} calls each after 2 warm-up calls; milliseconds\n")
    print("| tool | direct median / p95 | through MCP median / p95 | added (median) |")
    print("| --- | --- | --- | --- |")
    for name in CALLS:
        (dm, dp), (mm, mp) = _summary(direct[name]), _summary(mcp[name])
        print(f"| {name} | {dm:.1f} / {dp:.1f} | {mm:.1f} / {mp:.1f} | {mm - dm:+.1f} |")


if __name__ == "__main__":
    main()
