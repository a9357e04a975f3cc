"""The server's CPU per request of the chat's JS bundle (the 4.6 MB Chainlit builds), gzip accepted, as a browser
opening the chat without it in its cache asks for it.

    python -m bench.chat_assets [--tree PATH] [--requests 10]

`scholarloom serve` (demo mode, an empty data directory) runs from `--tree` (default: this checkout; a `git
worktree` of another commit compares with it); the first request is not counted (where the tree keeps each
compressed file, it compresses then). Prints CPU and wall time per request, and the response's encoding, size and
caching header.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.load import cpu_seconds
from harness.serve import free_port, wait_for_health

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--requests", type=int, default=10)
    args = parser.parse_args()
    port, data = free_port(), Path(tempfile.mkdtemp()) / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCHOLARLOOM_", "CHAINLIT_"))}
    env.update(PYTHONPATH=str(args.tree), SCHOLARLOOM_DATA_DIR=str(data), SCHOLARLOOM_DEMO="1",
               SCHOLARLOOM_PORT=str(port), SCHOLARLOOM_SHARED_MODELS_DIR=str(REPO / "data/local/models"))  # fmt: skip
    server = subprocess.Popen([sys.executable, "-m", "scholarloom.cli", "serve"], cwd=args.tree, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_health(base, 120)
        name = re.findall(r"/chat/assets/(index-[\w-]+\.js)", httpx.get(base + "/chat/").text)[0]
        with httpx.Client(headers={"Accept-Encoding": "gzip"}, timeout=60) as client:
            client.get(f"{base}/chat/assets/{name}")
            time.sleep(1)
            cpu, start = cpu_seconds(server.pid), time.perf_counter()
            for _ in range(args.requests):
                response = client.get(f"{base}/chat/assets/{name}")
            wall = (time.perf_counter() - start) / args.requests
            time.sleep(0.5)
            cpu = (cpu_seconds(server.pid) - cpu) / args.requests
        print(f"{args.tree}: server CPU {cpu:.3f} s and wall {wall:.3f} s per request; "
              f"{response.headers.get('content-encoding')}, {len(response.content)} bytes, "
              f"cache-control {response.headers.get('cache-control')}")  # fmt: skip
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
