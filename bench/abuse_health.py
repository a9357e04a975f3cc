"""The health endpoint's latency while a signed-in user's worst reading list and worst PDF are read, against a tree.

    python -m bench.abuse_health --data-dir DIR [--tree PATH] [--letters 15000] [--entries 8] [--commas 1000]

`scholarloom serve` runs from `--tree` (default: this checkout; a `git worktree` of another commit compares with
it) on a copy of DIR (a loaded demo: the PDF is handed in for one of its papers). A thread asks `/healthz` every
0.1 s throughout. Then, one after the other:

- **import**: a signed-in user posts a BibTeX list of `--entries` entries whose url, journal and note are each a run
  of `--letters` letters (an unbounded id pattern scanned them in time quadratic in their length, in the event loop);
- **pdf**: `scholarloom ingest pdfs` hands the server a PDF whose reference list is "arXiv" and `--commas` commas
  (three unbounded separator runs in a row: cubic), named for a paper of the demo, and waits for its job.

Prints, for each phase, how long it took and the health answers' count, median and worst latency in its window.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a data directory with the demo loaded")
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--entries", type=int, default=8)
    parser.add_argument("--letters", type=int, default=15_000)
    parser.add_argument("--commas", type=int, default=1_000)
    args = parser.parse_args()
    tree = args.tree.resolve()
    scratch = Path(tempfile.mkdtemp())
    data, port = scratch / "data", free_port()
    shutil.copytree(args.data_dir, data, ignore=shutil.ignore_patterns("chat-files"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCHOLARLOOM_", "CHAINLIT_"))}
    env.update(PYTHONPATH=str(tree), SCHOLARLOOM_DATA_DIR=str(data), SCHOLARLOOM_DEMO="1", SCHOLARLOOM_PORT=str(port),
               SCHOLARLOOM_SHARED_MODELS_DIR=str(REPO / "data/local/models"))  # fmt: skip
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
