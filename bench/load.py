"""Load: N concurrent signed-in chat sessions over socket.io against the real app (`scholarloom serve` on a copy
of a loaded data directory), with the scripted OpenAI-compatible LLM adding a fixed latency to every request.

    python -m bench.load --data-dir /tmp/benchdata [--sessions 1 10 50 100] [--turns 2] [--llm-latency 1.0]
                         [--tools on|off]

Each session signs in as its own user and connects (all of them before the first question), then asks `turns`
questions, each naming the session's own
token; the stand-in model searches (one real hybrid search per turn) and then answers quoting the token it
was given. A turn's latency runs from sending the question to the end of its run step. Errors are turns that
failed or timed out; cross-talk is an answer carrying another session's token, or a session seeing another
session's messages. Sessions start spread over `--ramp` seconds and think `--think` seconds between turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import httpx
import socketio

from assistant.pipeline import REWRITE
from harness.llm_server import ScriptedLLM, _probe_reply, text, tool_call
from harness.serve import served, user_message

PASSWORD = "load test password"
TOPICS = ["graph neural networks", "logging after training", "diphoton production", "point clouds", "transformers"]


def responder(body: dict) -> dict:
    """Search first; once the search result is in, answer with the token of the question asked. In pipeline mode
    (`--tools off`) the same model is asked to rewrite the question, then to write from the results."""
    if (probed := _probe_reply(body)) is not None:  # the server asks its model what it can do when it starts
        return probed
    messages = body["messages"]
    question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    token = question.split("[", 1)[1].split("]", 1)[0]
    if messages[-1]["role"] == "tool" or "<results>" in question:
        return text(f"Answer for [{token}]: see the first result [1].")
    if messages[0]["role"] == "system" and messages[0]["content"] == REWRITE:
        return text(question.split("]", 1)[1].strip())
    return tool_call("search_papers", query=question.split("]", 1)[1].strip())


class Session:
    def __init__(self, base: str, user: str, seed: int = 0) -> None:
        self.base, self.user = base, user
        self.rng = random.Random(f"{seed}:{user}")  # its start, topics and pauses: the same in every run
        self.token = uuid.uuid4().hex[:12]
        self.sio = socketio.AsyncClient(reconnection=False)
        self.done = asyncio.Event()
        self.answers: list[str] = []
        self.foreign = 0

        @self.sio.on("*")
        async def record(event, data):
            if event in ("new_message", "update_message") and isinstance(data, dict):
                said = data.get("output", "").replace("\\[", "[").replace("\\]", "]")  # the chat escapes brackets
                if data.get("type") == "assistant_message" and said.startswith("Answer for ["):
                    self.answers.append(said)
                if data.get("type") == "user_message" and self.token not in data.get("output", self.token):
                    self.foreign += 1
                if event == "update_message" and data.get("name") == "on_message":
                    self.done.set()

    async def connect(self) -> None:
        async with httpx.AsyncClient(base_url=self.base, timeout=60) as http:
            login = await http.post("/chat/login", data={"username": self.user, "password": PASSWORD})
            login.raise_for_status()
        await self.sio.connect(
            self.base,
            socketio_path="/chat/ws/socket.io",
            headers={"Cookie": f"access_token={login.cookies['access_token']}"},
            auth={"clientType": "webapp", "sessionId": str(uuid.uuid4()), "threadId": "", "userEnv": "{}"},
            transports=["websocket"],
            wait_timeout=30,
        )
        await self.sio.emit("connection_successful")

    async def turn(self, number: int, timeout: float) -> float:
        self.done.clear()
        question = f"[{self.token}] {self.rng.choice(TOPICS)} (turn {number})"
        start = time.perf_counter()
        await self.sio.emit("client_message", user_message(self.user, question))
        await asyncio.wait_for(self.done.wait(), timeout=timeout)
        return time.perf_counter() - start


class HealthWatch(threading.Thread):
    """Asks /healthz every `every` seconds; keeps (when asked, seconds to answer)."""

    def __init__(self, base: str, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.base, self.every = base, every
        self.samples: list[tuple[float, float]] = []
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=600) as client:
            while not self.stop.is_set():
                asked = time.monotonic()
                try:
                    client.get(self.base + "/healthz")
                    self.samples.append((asked, time.monotonic() - asked))
                except httpx.HTTPError as exc:  # (counted with the time it took to fail)
                    self.samples.append((asked, time.monotonic() - asked))
                    self.errors.append(f"after {time.monotonic() - asked:.1f} s: {type(exc).__name__}: {exc}"[:200])
                self.stop.wait(self.every)

    def between(self, start: float, end: float) -> dict:
        """The answers asked in [start, end], and one still waiting at `start` (its latency spans the window); once
        a question asked after `end` has its answer (one held up by the phase may arrive after it ended)."""
        while not any(asked > end for asked, _ in self.samples) and time.monotonic() < end + 600:
            time.sleep(0.05)
        taken = [s for asked, s in self.samples if start <= asked <= end or asked < start < asked + s]
        return {"health_answers": len(taken), "health_p50_s": round(statistics.median(taken), 3) if taken else None,
                "health_max_s": round(max(taken), 3) if taken else None}  # fmt: skip

    def summary(self, start: float, end: float) -> dict:
        taken = sorted(s for asked, s in self.samples if start <= asked <= end)
        pick = lambda q: round(taken[min(len(taken) - 1, int(q * len(taken)))], 3) if taken else None  # noqa: E731
        return {"health_p50_s": pick(0.5), "health_p95_s": pick(0.95), "health_max_s": pick(1.0)}


def cpu_seconds(pid: int, leave_out: int | None = None) -> float:
    """User plus system CPU time a process and its live child processes (the server's model process, the
    bench's stand-in) have used so far (Linux); `leave_out`: a child not counted, with its own children."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = [int(c) for task in Path(f"/proc/{pid}/task").iterdir()
                    for c in (task / "children").read_text().split()]  # fmt: skip
    except OSError:  # it ended meanwhile
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(c, leave_out) for c in children if c != leave_out)


async def run_level(
    base: str, users: list[str], turns: int, ramp: float, think: float, timeout: float, server_pid: int, seed: int = 0
) -> dict:
    latencies: list[float] = []
    timeline: list[tuple[float, float, str]] = []  # (when the turn began, since the level began; latency; user)
    errors: list[str] = []
    crosstalk = 0

    sessions = [Session(base, u, seed) for u in users]
    # Sign-in first (argon2id costs ~0.1 s of CPU a time; a login storm is not what this measures): every
    # session is signed in and connected before the first question.
    connected = await asyncio.gather(*(s.connect() for s in sessions), return_exceptions=True)
    for session, outcome in zip(sessions, connected, strict=True):
        if isinstance(outcome, Exception):
            errors.append(f"{session.user}: could not connect: {type(outcome).__name__}: {str(outcome)[:120]}")

    async def one(session: Session) -> None:
        nonlocal crosstalk
        user = session.user
        await asyncio.sleep(session.rng.uniform(0, ramp))
        try:
            if not session.sio.connected:
                return
            for number in range(turns):
                began = time.perf_counter() - started
                latencies.append(await session.turn(number, timeout))
                timeline.append((round(began, 2), round(latencies[-1], 3), user))
                await asyncio.sleep(session.rng.uniform(0.5, 1.5) * think)
        except Exception as exc:  # noqa: BLE001 - every failure is counted and named
            errors.append(f"{user}: {type(exc).__name__}: {str(exc)[:120]}")
        finally:
            if session.sio.connected:
                await session.sio.disconnect()
        wrong = [a for a in session.answers if f"[{session.token}]" not in a]
        crosstalk += len(wrong) + session.foreign
        if len(session.answers) < turns and not errors:
            errors.append(f"{user}: {len(session.answers)} answers for {turns} questions")

    started, watched, cpu_before = time.perf_counter(), time.monotonic(), cpu_seconds(server_pid)
    own_before = cpu_seconds(os.getpid(), leave_out=server_pid)
    watch = HealthWatch(base)  # /healthz every 0.1 s: how long any request waits for the server's event loop
    watch.start()
    await asyncio.gather(*(one(s) for s in sessions))
    watch.stop.set()
    watch.join()
    health = watch.summary(watched, time.monotonic())
    server_cpu = cpu_seconds(server_pid) - cpu_before
    own_cpu = cpu_seconds(os.getpid(), leave_out=server_pid) - own_before  # clients and stand-in: on the same 2 cores
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")  # noqa: E731
    return {
        "sessions": len(users),
        "turns": len(latencies),
        "p50_s": round(statistics.median(latencies), 3) if latencies else None,
        "p95_s": round(pick(0.95), 3),
        "max_s": round(latencies[-1], 3) if latencies else None,
        "errors": len(errors),
        "crosstalk": crosstalk,
        "wall_s": round(time.perf_counter() - started, 1),
        "server_cpu_ms_per_turn": round(1000 * server_cpu / max(1, len(latencies))),
        "bench_cpu_ms_per_turn": round(1000 * own_cpu / max(1, len(latencies))),
        **health,
        "first_errors": errors[:3],
        "slowest": sorted(timeline, key=lambda t: -t[1])[:8],  # (began at, seconds, user): when the tail happened
        "timeline": sorted(timeline),  # every turn (`--timeline` writes them out; not printed)
    }


def _serve_stand_in(latency: float, answer) -> None:  # in a process of its own (`stand_in`)
    llm = ScriptedLLM(responder=responder, latency=latency).start()
    answer.put(llm.api_base)
    llm.thread.join()


@contextmanager
def stand_in(latency: float):
    """The scripted model in a process of its own, as a provider is: in this one it would share the GIL with the
    hundred socket.io clients, and a burst of their events would hold its answers up."""
    context = multiprocessing.get_context("spawn")
    answer = context.Queue()
    process = context.Process(target=_serve_stand_in, args=(latency, answer), daemon=True)
    process.start()
    try:
        yield answer.get(timeout=60)
    finally:
        process.terminate()
        process.join(10)


def add_users(data: Path, users: list[str], tree: Path | None = None) -> None:
    """The load's users in a copied data directory, written by the served tree's own code (its accounts table)."""
    script = ("import sys\nfrom auth.accounts import add_user, clear_sign_in_failures, create_tables\n"
              "from scholarloom.settings import Settings\n"
              "engine = Settings(data_dir=sys.argv[1]).catalog().engine\ncreate_tables(engine)\n"
              "clear_sign_in_failures(engine)\nfor user in sys.argv[3:]:\n    add_user(engine, user, sys.argv[2], "
              "replace=True)\n")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARLOOM_")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    subprocess.run([sys.executable, "-c", script, str(data), PASSWORD, *users], env=env, cwd=tree, check=True)


def measure(
    data_dir: Path, levels: list[int], *, turns: int = 2, llm_latency: float = 1.0, ramp: float = 5.0,
    think: float = 2.0, timeout: float = 120.0, port: int = 8799, tools: str = "on", tree: Path | None = None,
    keep_log: Path | None = None, log_level: str = "warning",
) -> list[dict]:  # fmt: skip
    """Each level's figures (`run_level`) against `scholarloom serve` from `tree` (this checkout by default) on a copy
    of `data_dir`, after one warm-up turn."""
    with stand_in(llm_latency) as api_base, tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(data_dir, data, ignore=shutil.ignore_patterns("chat-files"))
        users = [f"load-{n:03d}" for n in range(max(levels))]
        add_users(data, users, tree)
        env = dict(SCHOLARLOOM_LLM="openai/scripted", SCHOLARLOOM_LLM_API_BASE=api_base, SCHOLARLOOM_LLM_TOOLS=tools,
                   SCHOLARLOOM_LLM_API_KEY="load-test", SCHOLARLOOM_LOG_LEVEL=log_level)  # fmt: skip
        try:
            with served(data, port, tree=tree, **env) as (base, server):
                # Warm-up (not reported): the server loads its embedding models on the first search.
                asyncio.run(run_level(base, users[:1], 1, 0.0, 0.0, timeout, server.pid))
                return [asyncio.run(run_level(base, users[:level], turns, ramp, think, timeout, server.pid))
                        for level in levels]  # fmt: skip
        finally:
            if keep_log is not None:
                shutil.copy(data.parent / f"serve-{port}.log", keep_log)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a data directory with a loaded corpus")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 10, 50, 100])
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--llm-latency", type=float, default=1.0, help="seconds the stand-in LLM takes per request")
    parser.add_argument("--ramp", type=float, default=5.0, help="sessions start spread over this many seconds")
    parser.add_argument("--think", type=float, default=2.0, help="mean seconds between a session's turns")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--tools", choices=["on", "off"], default="on",
                        help="off: the pipeline answers (SCHOLARLOOM_LLM_TOOLS=off) instead of the agent")  # fmt: skip
    parser.add_argument("--tree", type=Path, default=None, help="serve another checkout's code (a git worktree)")
    parser.add_argument("--keep-log", type=Path, default=None, help="copy the server's log here")
    parser.add_argument("--log-level", default="warning", help="the server's (info: every model call and tool)")
    parser.add_argument("--timeline", type=Path, default=None, help="write every turn (began at, seconds, user) here")
    args = parser.parse_args()
    print(json.dumps({"llm_latency_s": args.llm_latency, "turns_per_session": args.turns, "ramp_s": args.ramp,
                      "think_s": args.think, "tools": args.tools, "tree": str(args.tree or ".")}))  # fmt: skip
    for result in measure(args.data_dir, args.sessions, turns=args.turns, llm_latency=args.llm_latency, ramp=args.ramp,
                          think=args.think, timeout=args.timeout, port=args.port, tools=args.tools, tree=args.tree,
                          keep_log=args.keep_log, log_level=args.log_level):
        timeline = result.pop("timeline")
        if args.timeline is not None:
            with args.timeline.open("a") as out:
                out.write(json.dumps({"sessions": result["sessions"], "turns": timeline}) + "\n")
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
