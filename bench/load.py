"""Load: N signed-in chat sessions over socket.io against the real app (`scholarloom serve` on a copy of a loaded
data directory), with a stand-in OpenAI-compatible model in a process of its own; or a storm of sign-ins.

    python -m bench.load --data-dir /tmp/benchdata [--sessions 1 10 50 100] [--turns 2] [--llm-latency 1.0]
                         [--ramp 5] [--think 2] [--answers realistic|short] [--tools on|off]
                         [--client-processes 0] [--scenario chat|signin]

Each session arrives at its own moment of the `--ramp` (drawn from the seed: the same in every run), signs in as
its own user, connects, then asks `--turns` questions, each naming the session's own token, thinking `--think`
seconds (±50%) between them. The stand-in model (`harness.realistic`) answers each question like a real model
(`--answers realistic`): two or three tool calls (`search_papers`, `get_paper` on the best paper found in one turn
of two, `search_fulltext`), then about 300 words streamed three a chunk at a steady rate, written from what the
tools returned and citing several of their papers; each request takes `--llm-latency` seconds, a streamed answer
spending most of it on its chunks. `--answers short`: the benchmark before issue 69 (one search, a line citing [1]).
A turn's latency runs from sending the question to the end of its run step. Errors are sign-ins, connections or
turns that failed or timed out, counted by kind; cross-talk is an answer carrying another session's token, or a
session seeing another session's messages.

Server CPU counts the server and every process under it (the model's child process, encoder processes); client CPU
the client processes (`--client-processes`; 0: one per 100 sessions) and this one; the model's the stand-in's.
The bench asks `/healthz` every 0.1 s throughout. `--scenario signin`: each level is a storm of that many sign-ins
(then the chat opened) spread over the ramp: their p50 / p95 / worst, errors by kind, `/healthz` during it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import httpx

from harness.llm_server import ScriptedLLM
from harness.load_clients import (
    PASSWORD, Plan, client_figures, in_processes, peak, pick, run_sessions, run_sign_ins,
)  # fmt: skip
from harness.realistic import RealisticResponder, short_responder
from harness.serve import served

SESSIONS_PER_PROCESS = 100  # client sessions one process runs at most (`--client-processes 0`)


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
        return {"health_p50_s": pick(taken, 0.5), "health_p95_s": pick(taken, 0.95), "health_max_s": pick(taken, 1.0),
                "health_errors": len(self.errors)}  # fmt: skip


def cpu_seconds(pid: int, leave_out: int | None = None) -> float:
    """User plus system CPU time a process and all its processes have used so far (Linux): its own, its live
    children's and theirs, and those of the children it waited for; `leave_out`: a child not counted, with its own
    children."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = [int(c) for task in Path(f"/proc/{pid}/task").iterdir()
                    for c in (task / "children").read_text().split()]  # fmt: skip
    except OSError:  # it ended meanwhile
        return 0.0
    own = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime, stime, cutime, cstime
    return own + sum(cpu_seconds(c, leave_out) for c in children if c != leave_out)


class Meter:
    """CPU seconds of the server (all its processes), the stand-in model and this process, from when it was made."""

    def __init__(self, server_pid: int, model_pid: int) -> None:
        self.pids = server_pid, model_pid
        self.start = (cpu_seconds(server_pid), cpu_seconds(model_pid), time.process_time())

    def used(self) -> tuple[float, float, float]:
        now = (cpu_seconds(self.pids[0]), cpu_seconds(self.pids[1]), time.process_time())
        return tuple(b - a for a, b in zip(self.start, now, strict=True))  # type: ignore[return-value]


def watched(run, base: str, plan: Plan, processes: int, server_pid: int, model_pid: int):
    """`run` (`run_sessions` or `run_sign_ins`) in client processes while `/healthz` is asked every 0.1 s (how long
    any request waits for the server's event loop) and CPU is metered: (the processes' results, when they began and
    ended, CPU seconds of the server, the stand-in and this process, the health watch)."""
    watch = HealthWatch(base)
    watch.start()
    meter = Meter(server_pid, model_pid)
    results, began, ended = in_processes(run, plan, processes)
    used = meter.used()
    watch.stop.set()
    watch.join()
    return results, began, ended, used, watch


def run_level(base: str, plan: Plan, processes: int, server_pid: int, model_pid: int) -> dict:
    """One level of chat sessions: turn latency, errors, what the answers showed, CPU per turn, `/healthz`."""
    results, began, ended, (server_cpu, model_cpu, own_cpu), watch = watched(
        run_sessions, base, plan, processes, server_pid, model_pid)
    timeline = sorted(t for r in results for t in r["turns"])
    latencies = sorted(seconds for _, seconds, _ in timeline)
    shown = [s for r in results for s in r["shown"]]
    count = len(latencies)
    mean = lambda key: round(sum(s.get(key, 0) for s in shown) / len(shown), 1) if shown else None  # noqa: E731
    return {
        "sessions": len(plan.users),
        "turns": count,
        "peak_connected": peak([span for r in results for span in r["spans"]]),
        "p50_s": round(statistics.median(latencies), 3) if latencies else None,
        "p95_s": pick(latencies, 0.95),
        "max_s": pick(latencies, 1.0),
        "crosstalk": sum(r["crosstalk"] for r in results),
        "sign_in_p95_s": pick(sorted(x for r in results for x in r["sign_in"]), 0.95),
        "connect_p95_s": pick(sorted(x for r in results for x in r["connect"]), 0.95),
        "wall_s": round(ended - began, 1),
        "server_cpu_ms_per_turn": round(1000 * server_cpu / max(1, count)),
        "model_cpu_ms_per_turn": round(1000 * model_cpu / max(1, count)),
        **client_figures(results, own_cpu, count),
        **watch.summary(began, ended),
        "per_turn": {"tool_steps": mean("tools"), "streamed_chunks": mean("chunks"), "cards": mean("cards"),
                     "citations": mean("citations")},  # fmt: skip
        **busy_figures(results),
        "slowest": sorted(timeline, key=lambda t: -t[1])[:8],  # (began at, seconds, user): when the tail happened
        "timeline": timeline,  # every turn (`--timeline` writes them out; not printed)
    }


def busy_figures(results: list[dict]) -> dict:
    """What the server said when busy (`chatui.busy`), not errors: turns that waited in line with the notice shown,
    turns refused with a time to try again, sign-ins refused with one (each tried again after it)."""
    shown = [s for r in results for s in r["shown"]]
    return {"queued_turns": sum(s.get("queued", 0) for s in shown),
            "refused_turns": sum(s.get("refused", 0) for s in shown),
            "refused_sign_ins": sum(r.get("refused_sign_ins", 0) for r in results)}  # fmt: skip


def run_storm(base: str, plan: Plan, processes: int, server_pid: int, model_pid: int) -> dict:
    """One sign-in storm: each sign-in's time (and the chat's opening after it), errors by kind, `/healthz`."""
    results, began, ended, (server_cpu, _, own_cpu), watch = watched(
        run_sign_ins, base, plan, processes, server_pid, model_pid)
    signed, opened = (sorted(x for r in results for x in r[key]) for key in ("sign_in", "connect"))
    return {
        "scenario": "signin",
        "sessions": len(plan.users),
        "signed_in": len(signed),
        "sign_in_p50_s": pick(signed, 0.5),
        "sign_in_p95_s": pick(signed, 0.95),
        "sign_in_max_s": pick(signed, 1.0),
        "connect_p50_s": pick(opened, 0.5),
        "connect_p95_s": pick(opened, 0.95),
        "connect_max_s": pick(opened, 1.0),
        "wall_s": round(ended - began, 1),
        "server_cpu_ms_per_sign_in": round(1000 * server_cpu / max(1, len(signed))),
        **busy_figures(results),
        **client_figures(results, own_cpu, len(signed), "sign_in"),
        **watch.summary(began, ended),
        "timeline": [],
    }


def _serve_stand_in(latency: float, answers: str, answer) -> None:  # in a process of its own (`stand_in`)
    chosen = RealisticResponder(latency) if answers == "realistic" else short_responder
    llm = ScriptedLLM(responder=chosen, latency=latency).start()
    answer.put(llm.api_base)
    llm.thread.join()


@contextmanager
def stand_in(latency: float, answers: str = "realistic"):
    """The scripted model in a process of its own, as a provider is: (its address, its process id)."""
    context = multiprocessing.get_context("spawn")
    answer = context.Queue()
    process = context.Process(target=_serve_stand_in, args=(latency, answers, answer), daemon=True)
    process.start()
    try:
        yield answer.get(timeout=60), process.pid
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


def client_processes(asked: int, sessions: int) -> int:
    """The client processes for a level: as asked, or (0) one per `SESSIONS_PER_PROCESS` sessions."""
    return max(1, min(asked or math.ceil(sessions / SESSIONS_PER_PROCESS), sessions))


@contextmanager
def load_server(
    data_dir: Path, users: list[str], *, llm_latency: float = 1.0, answers: str = "realistic", tools: str = "on",
    port: int = 8799, tree: Path | None = None, keep_log: Path | None = None, log_level: str = "warning",
    settings: dict[str, str] | None = None,
):  # fmt: skip
    """`scholarloom serve` from `tree` (this checkout by default) on a copy of `data_dir` with `users`, talking to
    the stand-in model, with `settings` (SCHOLARLOOM_* variables) besides: (its address, its process id, the
    stand-in's process id)."""
    with stand_in(llm_latency, answers) as (api_base, model_pid), tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(data_dir, data, ignore=shutil.ignore_patterns("chat-files"))
        add_users(data, users, tree)
        env = dict(SCHOLARLOOM_LLM="openai/scripted", SCHOLARLOOM_LLM_API_BASE=api_base, SCHOLARLOOM_LLM_TOOLS=tools,
                   SCHOLARLOOM_LLM_API_KEY="load-test", SCHOLARLOOM_LOG_LEVEL=log_level)  # fmt: skip
        env |= settings or {}
        try:
            with served(data, port, tree=tree, **env) as (base, server):
                yield base, server.pid, model_pid
        finally:
            if keep_log is not None:
                shutil.copy(data.parent / f"serve-{port}.log", keep_log)


def measure(
    data_dir: Path, levels: list[int], *, turns: int = 2, llm_latency: float = 1.0, ramp: float = 5.0,
    think: float = 2.0, timeout: float = 120.0, port: int = 8799, tools: str = "on", tree: Path | None = None,
    keep_log: Path | None = None, log_level: str = "warning", answers: str = "realistic", processes: int = 0,
    scenario: str = "chat", seed: int = 0, settings: dict[str, str] | None = None,
) -> list[dict]:  # fmt: skip
    """Each level's figures (`run_level`, or `run_storm` for the sign-in scenario) against `load_server`, after
    one warm-up turn."""
    users = [f"load-{n:03d}" for n in range(max(levels))]
    with load_server(data_dir, users, llm_latency=llm_latency, answers=answers, tools=tools, port=port, tree=tree,
                     keep_log=keep_log, log_level=log_level,
                     settings=settings) as (base, server_pid, model_pid):  # fmt: skip
        plan = Plan(base, users, 0.0, turns, ramp, think, timeout, seed)
        # Warm-up (not reported): the server loads its embedding models on the first search.
        run_level(base, replace(plan, users=users[:1], turns=1, ramp=0, think=0), 1, server_pid, model_pid)
        run = run_storm if scenario == "signin" else run_level
        return [run(base, replace(plan, users=users[:level]), client_processes(processes, level), server_pid,
                    model_pid) for level in levels]  # fmt: skip


def _settings(pairs: list[str]) -> dict[str, str]:
    found = dict(pair.split("=", 1) for pair in pairs)
    if any(not key.startswith("SCHOLARLOOM_") for key in found):
        raise SystemExit("--set takes SCHOLARLOOM_* settings only")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a data directory with a loaded corpus")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 10, 50, 100])
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--llm-latency", type=float, default=1.0, help="seconds the stand-in LLM takes per request")
    parser.add_argument("--ramp", type=float, default=5.0, help="sessions arrive spread over this many seconds")
    parser.add_argument("--think", type=float, default=2.0, help="mean seconds between a session's turns")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--tools", choices=["on", "off"], default="on",
                        help="off: the pipeline answers (SCHOLARLOOM_LLM_TOOLS=off) instead of the agent")  # fmt: skip
    parser.add_argument("--answers", choices=["realistic", "short"], default="realistic",
                        help="the stand-in's answers: a real model's, or one search and a line (before issue 69)")
    parser.add_argument("--client-processes", type=int, default=0,
                        help=f"processes running the clients (0: one per {SESSIONS_PER_PROCESS} sessions)")
    parser.add_argument("--scenario", choices=["chat", "signin"], default="chat",
                        help="signin: a storm of --sessions sign-ins over --ramp seconds")
    parser.add_argument("--tree", type=Path, default=None, help="serve another checkout's code (a git worktree)")
    parser.add_argument("--keep-log", type=Path, default=None, help="copy the server's log here")
    parser.add_argument("--set", action="append", default=[], metavar="SCHOLARLOOM_X=VALUE",
                        help="a setting of the served instance (repeatable), e.g. SCHOLARLOOM_CHAT__AT_ONCE=12")
    parser.add_argument("--log-level", default="warning", help="the server's (info: every model call and tool)")
    parser.add_argument("--timeline", type=Path, default=None, help="write every turn (began at, seconds, user) here")
    args = parser.parse_args()
    print(json.dumps({"scenario": args.scenario, "llm_latency_s": args.llm_latency, "answers": args.answers,
                      "turns_per_session": args.turns, "ramp_s": args.ramp, "think_s": args.think, "tools": args.tools,
                      "client_processes": args.client_processes, "tree": str(args.tree or "."),
                      "settings": _settings(args.set)}))  # fmt: skip
    for result in measure(args.data_dir, args.sessions, turns=args.turns, llm_latency=args.llm_latency, ramp=args.ramp,
                          think=args.think, timeout=args.timeout, port=args.port, tools=args.tools, tree=args.tree,
                          keep_log=args.keep_log, log_level=args.log_level, answers=args.answers,
                          processes=args.client_processes, scenario=args.scenario,
                          settings=_settings(args.set)):  # fmt: skip
        timeline = result.pop("timeline")
        if args.timeline is not None:
            with args.timeline.open("a") as out:
                out.write(json.dumps({"sessions": result["sessions"], "turns": timeline}) + "\n")
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
