"""The health endpoint's latency while a signed-in user's worst reading list and worst PDF are read, against a tree.

    python -m bench.abuse_health --data-dir DIR [--tree PATH] [--letters 15000] [--entries 8] [--commas 1000]
        [--body-mb 48] [--flood-seconds 20] [--flood-callers 8]

`scholarloom serve` runs from `--tree` (default: this checkout; a `git worktree` of another commit compares with
it) on a copy of DIR (a loaded demo: the PDF is handed in for one of its papers). A thread asks `/healthz` every
0.1 s throughout. Then, one after the other:

- **import**: a signed-in user posts a BibTeX list of `--entries` entries whose url, journal and note are each a run
  of `--letters` letters (an unbounded id pattern scanned them in time quadratic in their length, in the event loop);
- **body**: a `--body-mb` MB JSON correction sent with no cookie to `PATCH /api/library/1`, its length declared, then
  chunked (it was parsed on the event loop before the sign-in check: issue 66);
- **mcp**: the same user's two personal tokens, `--flood-callers` threads each, calling `search_papers` over `/mcp`
  as fast as they are answered for `--flood-seconds` (the outcomes counted: answers, refusals in words, 429s);
- **pdf**: `scholarloom ingest pdfs` hands the server a PDF whose reference list is "arXiv" and `--commas` commas
  (three unbounded separator runs in a row: cubic), named for a paper of the demo, and waits for its job.

Prints, for each phase, how long it took and the health answers' count, median and worst latency in its window.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

from bench.load import HealthWatch
from harness.hostile_pdfs import backtracking_references
from harness.serve import free_port, wait_for_health

REPO = Path(__file__).resolve().parent.parent
PAPER = "2004.07180"  # SPECTER: in the demo, its own PDF is not
PASSWORD = "abuse bench password"


def crafted_list(entries: int, letters: int) -> str:
    field = "a" * letters
    return "".join(f"@misc{{k{i}, url = {{{field}}}, journal = {{{field}}}, note = {{{field}}}}}\n"
                   for i in range(entries))  # fmt: skip


def anonymous_body(client: httpx.Client, watch: HealthWatch, megabytes: int) -> dict:
    """A correction of `megabytes` MB of JSON sent with no cookie, once with its length declared and once chunked
    (a generator: no length), to `PATCH /api/library/1`; each answer's status and time, and /healthz meanwhile."""
    body = b'{"title": "' + b"a" * (megabytes * 1024 * 1024) + b'"}'
    found = {}
    start = time.monotonic()
    with httpx.Client(base_url=str(client.base_url), timeout=600) as anonymous:
        for name, content in (("declared", body), ("chunked", (body[i : i + 65536] for i in range(0, len(body), 65536)))):
            began = time.monotonic()
            try:
                status = anonymous.patch("/api/library/1", content=content,
                                         headers={"content-type": "application/json"}).status_code  # fmt: skip
            except httpx.HTTPError as exc:  # (a server that answers and closes before the whole body is sent)
                status = f"{type(exc).__name__}"
            found[name] = {"status": status, "seconds": round(time.monotonic() - began, 3)}
    return {"mb": megabytes, **found, **watch.between(start, time.monotonic())}


def _token(client: httpx.Client, name: str) -> str:
    page = client.post("/me/tokens", data={"name": name, "scope": "read"}, headers={"Origin": str(client.base_url)})
    page.raise_for_status()
    return re.search(r"sl_[A-Za-z0-9_-]{43}", page.text)[0]


def mcp_flood(client: httpx.Client, watch: HealthWatch, base: str, seconds: float, callers: int) -> dict:
    """Two tokens of one user, `callers` threads each, calling `search_papers` over `/mcp` as fast as they are
    answered for `seconds`: what came back (tool results, refusals in words, 429s) and /healthz meanwhile. The
    callers run in a process of their own: in this one their threads would hold up the health watch's."""
    tokens = [_token(client, f"flood {n}") for n in (1, 2)]
    start = time.monotonic()
    with ProcessPoolExecutor(1) as pool:
        outcomes = pool.submit(_flood, base, tokens, seconds, callers).result()
    return {"tokens": 2, "callers": 2 * callers, "seconds": seconds, "outcomes": outcomes,
            **watch.between(start, time.monotonic())}  # fmt: skip


def _flood(base: str, tokens: list[str], seconds: float, callers: int) -> dict[str, int]:
    outcomes: Counter[str] = Counter()
    lock, end = threading.Lock(), time.monotonic() + seconds

    def call(token: str, number: int) -> None:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        with httpx.Client(base_url=base, timeout=120, headers=headers) as http:
            while time.monotonic() < end:
                sent = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                        "params": {"name": "search_papers", "arguments": {"query": "dialog state tracking"}}}  # fmt: skip
                answer = http.post("/mcp", json=sent)
                said = answer.text
                kind = (f"http {answer.status_code}" if answer.status_code != 200 else
                        "refused: busy" if "The server is busy" in said or "waiting for a turn" in said else
                        "tool error" if '"isError":true' in said else "answered")  # fmt: skip
                with lock:
                    outcomes[kind] += 1
                if answer.status_code == 429:
                    time.sleep(min(float(answer.headers.get("retry-after", "1")), max(0.0, end - time.monotonic())))

    threads = [threading.Thread(target=call, args=(token, n)) for token in tokens for n in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return dict(outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a data directory with the demo loaded")
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--entries", type=int, default=8)
    parser.add_argument("--letters", type=int, default=15_000)
    parser.add_argument("--commas", type=int, default=1_000)
    parser.add_argument("--body-mb", type=int, default=48, help="the anonymous JSON body's size")
    parser.add_argument("--flood-seconds", type=float, default=20.0)
    parser.add_argument("--flood-callers", type=int, default=8, help="threads per token")
    args = parser.parse_args()
    tree = args.tree.resolve()
    scratch = Path(tempfile.mkdtemp())
    data, port = scratch / "data", free_port()
    shutil.copytree(args.data_dir, data, ignore=shutil.ignore_patterns("chat-files"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCHOLARLOOM_", "CHAINLIT_"))}
    env.update(PYTHONPATH=str(tree), SCHOLARLOOM_DATA_DIR=str(data), SCHOLARLOOM_DEMO="1", SCHOLARLOOM_PORT=str(port),
               SCHOLARLOOM_SHARED_MODELS_DIR=str(models if (models := args.data_dir / "models").is_dir()
                                                 else REPO / "data/local/models"))  # fmt: skip
    cli = [sys.executable, "-m", "scholarloom.cli"]
    subprocess.run([*cli, "users", "add", "abuser", "--password-stdin", "--replace"], input=PASSWORD.encode(),
                   cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    server = subprocess.Popen([*cli, "serve"], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {"tree": str(tree)}
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_health(base, 180)
        watch = HealthWatch(base)
        watch.start()
        with httpx.Client(base_url=base, timeout=3600) as client:
            client.post("/chat/login", data={"username": "abuser", "password": PASSWORD}).raise_for_status()
            time.sleep(2)  # a quiet baseline
            results["idle"] = watch.between(time.monotonic() - 2, time.monotonic())
            start = time.monotonic()
            answer = client.post("/api/library/import", files={"file": ("list.bib", crafted_list(args.entries,
                                 args.letters).encode(), "text/plain")})  # fmt: skip
            end = time.monotonic()
            results["import"] = {"status": answer.status_code, "seconds": round(end - start, 2),
                                 **watch.between(start, end)}  # fmt: skip
            results["body"] = anonymous_body(client, watch, args.body_mb)
            results["mcp"] = mcp_flood(client, watch, base, args.flood_seconds, args.flood_callers)
        pdf = scratch / f"{PAPER}.pdf"
        pdf.write_bytes(backtracking_references(args.commas))
        start = time.monotonic()
        handed = subprocess.run([*cli, "ingest", "pdfs", str(pdf)], cwd=tree, env=env, capture_output=True, text=True)
        end = time.monotonic()
        results["pdf"] = {"exit": handed.returncode, "seconds": round(end - start, 2), **watch.between(start, end)}
        if handed.returncode:
            results["pdf"]["said"] = (handed.stdout + handed.stderr)[-600:]
        watch.stop.set()
        results["health_errors"] = watch.errors[:3]
        print(json.dumps(results))
    finally:
        server.terminate()
        server.wait(60)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
