"""Chat turns while the server runs an ingest job, and the job's speed beside the same ingest run alone.

    python -m bench.jobs_load --work /tmp/jobsbench [--users 3] [--turns 30] [--think 1]

1. A base data directory: the demo corpus without its six PDFs (their records are there), loaded once.
2. Alone: on a copy, `scholarloom ingest pdfs data/demo/pdfs` with no server: the command's own process.
3. Idle: `scholarloom serve` on another copy; `--users` signed-in socket.io sessions each ask `--turns`
   questions, reading `--think` seconds between them (retrieval-only mode: a hybrid search and a full-text search
   per turn).
4. During: the same server; the same command now hands its job to the server, and the users keep asking until
   the command ends. The job's time is its row's started_at -> finished_at; "during" counts the turns that overlap
   that window (the turns while the command's own process starts and before the job is claimed are reported apart).
5. Idle again: the same `--turns` after the job, so that idle is measured on both sides of it (drift in the
   machine shows up in both samples alike).

Prints p50/p95 turn latency idle and during, their ratio, and the job's throughput as a share of the run alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from auth.accounts import add_user, create_tables
from harness.chat_client import PASSWORD, ChatClient
from harness.serve import served
from ingest.demo import DEMO_DIR, load_demo
from ingest.writer import Writer
from jobs.queue import JobQueue
from scholarloom.settings import Settings

SCHOLARLOOM = str(Path(sys.executable).with_name("scholarloom"))
QUESTIONS = ["graph neural networks for molecules", "How does SPECTER use the citation graph?",
             "dialog state tracking with copy mechanisms", "logging after model training", "diphoton production"]


def base_archive(work: Path) -> Path:
    """The demo without its PDFs (kept between runs)."""
    data = work / "base"
    if (data / "ready").exists():
        return data
    shutil.rmtree(data, ignore_errors=True)
    root = work / "corpus"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(DEMO_DIR, root, ignore=shutil.ignore_patterns("*.pdf"))
    settings = Settings(data_dir=data)
    load_demo(Writer.of(settings.archive()), root)
    create_tables(settings.catalog().engine)
    add_user(settings.catalog().engine, "alice", PASSWORD)
    settings.close()
    (data / "ready").write_text("")
    return data


def _copy(base: Path, to: Path) -> Path:
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(base, to)
    return to


def _env(data: Path) -> dict:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("SCHOLARLOOM_", "CHAINLIT_"))}
    shared = os.environ.get("SCHOLARLOOM_SHARED_MODELS_DIR")
    return {**kept, "SCHOLARLOOM_DATA_DIR": str(data), **({"SCHOLARLOOM_SHARED_MODELS_DIR": shared} if shared else {})}


async def _users(base: str, users: int, turns: int | None, until=None, think: float = 0.0) -> list[Turn]:
    """`users` sessions asking side by side (one account, one session each); every turn's (wall start, latency)."""
    answers = await asyncio.gather(*(_ask(base, turns, until, think) for _ in range(users)))
    return [latency for one in answers for latency in one]


Turn = tuple[float, float]


async def _ask(base: str, turns: int | None, until=None, think: float = 0.0) -> list[Turn]:
    chat = ChatClient(base, "alice")
    await chat.connect()
    latencies, n = [], 0
    while (turns is None or n < turns) and not (until and until()):
        wall, start = time.time(), time.perf_counter()
        await chat.ask(QUESTIONS[n % len(QUESTIONS)])
        latencies.append((wall, time.perf_counter() - start))
        n += 1
        await asyncio.sleep(think)
    await chat.sio.disconnect()
    return latencies


def _overlaps(turn: Turn, window: tuple[float, float]) -> bool:
    return turn[0] < window[1] and turn[0] + turn[1] > window[0]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(q * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--think", type=float, default=1.0, help="Seconds a user reads before asking again.")
    parser.add_argument("--users", type=int, default=3, help="Sessions asking side by side.")
    args = parser.parse_args()
    base = base_archive(args.work)

    alone_dir = _copy(base, args.work / "alone")
    start = time.perf_counter()
    subprocess.run([SCHOLARLOOM, "ingest", "pdfs", str(DEMO_DIR / "pdfs")], env=_env(alone_dir), check=True,
                   capture_output=True)  # fmt: skip
    alone = time.perf_counter() - start

    served_dir = _copy(base, args.work / "served")
    # The job runs the encoder on every passage, as it does for PDFs that are not the demo's (whose vectors the
    # server's jobs would otherwise read from the demo's book).
    with served(served_dir, SCHOLARLOOM_VECTOR_BOOK="off") as (url, _):
        asyncio.run(_ask(url, 3))  # warm up: models loaded, first search done
        idle = asyncio.run(_users(url, args.users, args.turns, think=args.think))
        command = subprocess.Popen([SCHOLARLOOM, "ingest", "pdfs", str(DEMO_DIR / "pdfs")], env=_env(served_dir),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        during = asyncio.run(_users(url, args.users, None, until=lambda: command.poll() is not None, think=args.think))
        command.wait()
        idle += asyncio.run(_users(url, args.users, args.turns, think=args.think))
    queue = JobQueue(Settings(data_dir=served_dir).catalog().engine)
    (job,) = [j for j in queue.recent() if j.kind == "pdfs"]
    job_seconds = (job.finished_at - job.started_at).total_seconds()
    window = (job.started_at.timestamp(), job.finished_at.timestamp())
    outside = [t for t in during if not _overlaps(t, window)]
    idle, during = [t[1] for t in idle], [t[1] for t in during if _overlaps(t, window)]
    print(f"ingest pdfs alone (own process): {alone:.1f} s wall, including the command's start")
    print(f"the same job in the server while a user chats: {job_seconds:.1f} s (started -> finished), "
          f"{job.counts.get('passages', 0)} passages, state {job.state}")
    print(f"throughput of the job against the run alone: {alone / job_seconds:.0%}")
    print(f"chat turns idle   ({len(idle)}): p50 {statistics.median(idle):.3f} s, p95 {_p(idle, 0.95):.3f} s")
    print(f"chat turns during ({len(during)}): p50 {statistics.median(during):.3f} s, p95 {_p(during, 0.95):.3f} s")
    print(f"p95 during / idle: {_p(during, 0.95) / _p(idle, 0.95):.2f}x")
    if outside:
        print(f"turns while the command ran but outside the job ({len(outside)}): "
              f"p95 {_p([t[1] for t in outside], 0.95):.3f} s")


if __name__ == "__main__":
    main()
