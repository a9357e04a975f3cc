"""`scholarloom serve` in its own process, as `make demo` runs it: for the browser, OAuth and load tests."""

from __future__ import annotations

import functools
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


class Server(subprocess.Popen):
    """`scholarloom serve` writing what it prints to a file (a pipe nobody reads would stall a long-lived server)."""

    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@functools.cache
def tls() -> ssl.SSLContext:
    """One TLS context for the run's short-lived HTTP clients (`verify=tls()`): httpx builds a new one for each client
    otherwise, loading the whole CA bundle each time (tens of ms of CPU), though the servers tests ask speak plain
    HTTP."""
    return httpx.create_ssl_context()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# What every instance of a test run shares with the processes tests start (set by tests/conftest.py).
RUN_WIDE = ("SCHOLARLOOM_SHARED_MODELS_DIR", "SCHOLARLOOM_EMBED_THREADS")


def child_environment(data_dir: Path, **env: str) -> dict[str, str]:
    """The environment of a `scholarloom` process a test starts on `data_dir`: not this process's own settings, nor
    the Chainlit root its chat app was given (the child is an app of its own), but the run's shared models and
    encoder threads."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("SCHOLARLOOM_", "CHAINLIT_")) or k in RUN_WIDE}
    return {**kept, "SCHOLARLOOM_DATA_DIR": str(data_dir), **env}


def wait_for_health(base: str, seconds: float, process: Server | None = None) -> None:
    """Until `base`/healthz answers 200; raises when `process` ends first or `seconds` pass. One client asks every
    time (a new client per question would load the CA bundle each time: a second of CPU per server start)."""
    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=1, verify=tls()) as client:
        while True:
            if (process is not None and process.poll() is not None) or time.monotonic() > deadline:
                if process is not None:
                    process.kill()
                raise RuntimeError(f"scholarloom serve did not start: {process.output()[-2000:] if process else base}")
            try:
                if client.get(base + "/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)


@contextmanager
def served(
    data_dir: Path, port: int | None = None, tree: Path | None = None, **env: str
) -> Iterator[tuple[str, Server]]:
    """The app on 127.0.0.1 over `data_dir` in demo mode, with extra environment; yields (base URL, process)
    once /healthz answers, and stops it afterwards. What it prints goes to `serve-<port>.log` beside `data_dir`.
    `tree`: the code of another checkout (a `git worktree` of another commit, with this virtualenv's packages)."""
    port = port or free_port()
    environment = {
        **child_environment(data_dir),
        "SCHOLARLOOM_DEMO": "1",
        "SCHOLARLOOM_PORT": str(port),
        **({"PYTHONPATH": str(tree)} if tree else {}),
        **env,
    }
    command = [sys.executable, "-m", "scholarloom.cli", "serve"] if tree else [
        str(Path(sys.executable).with_name("scholarloom")), "serve"]  # fmt: skip
    log = data_dir.parent / f"serve-{port}.log"
    with log.open("ab") as sink:
        process = Server(command, env=environment, stdout=sink, stderr=subprocess.STDOUT, cwd=tree)
    process.log = log
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base, 120, process)
        yield base, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def user_message(user: str, text: str) -> dict:
    """What the browser emits as `client_message` when a user sends a question."""
    import uuid
    from datetime import datetime, timezone

    message = {
        "id": str(uuid.uuid4()),
        "threadId": "",
        "name": user,
        "type": "user_message",
        "output": text,
        "createdAt": datetime.now(timezone.utc).isoformat(),
    }
    return {"message": message, "fileReferences": None}
