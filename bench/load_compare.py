"""The chat under load, trees in one sitting: base commits and this working tree, at 1 and 100 sessions.

    python -m bench.load_compare --base 2ea98ca [c9981a6 ...] [--runs 3] [--pace human saturating]
                                 [--sessions 1 100] [--keep DIR] [--answers realistic|short]

Every change to the chat, its tools or the stores gives these figures against the commit it started from (the
issue's note says which). Each base is checked out with `git worktree` and served with this checkout's
virtualenv (a base whose locked packages differ needs its own: say so). Each tree answers from a demo data
directory built by its own `scholarloom ingest demo` (`--keep DIR` keeps the builds there, `data-<commit>` and
`data-tree`, and reuses them next time). Runs go round the trees (base, ..., tree, base, ...), each a fresh server
(`bench.load`), the sessions' starts, topics and pauses drawn from the same seed in every one. Paces:

- human: 3 turns, 10 s (±50%) between them, sessions started over 10 s;
- saturating: 2 turns, 2 s between them, started over 5 s.

The stand-in model takes 1 s per request. Prints each run's line, then per tree and pace the medians over runs of
the 1-session p95, the 100-session p50 and p95, their ratio (the goal: p95 at 100 within 2x of one session) and
the server's CPU per turn.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.load import measure

REPO = Path(__file__).resolve().parent.parent
PACES = {"human": dict(turns=3, think=10.0, ramp=10.0), "saturating": dict(turns=2, think=2.0, ramp=5.0)}


def worktree(commit: str, folder: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), commit], check=True,
                   capture_output=True)  # fmt: skip
    return folder


def demo_data(tree: Path, folder: Path) -> Path:
    """The demo loaded by `tree`'s own code into `folder` (built once)."""
    if (folder / "scholarloom.db").exists():
        return folder
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree), "SCHOLARLOOM_DATA_DIR": str(folder),
           "SCHOLARLOOM_SHARED_MODELS_DIR": str(REPO / "data/local/models"), "HOME": str(Path.home())}  # fmt: skip
    subprocess.run([sys.executable, "-m", "scholarloom.cli", "ingest", "demo"], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", nargs="+", required=True, help="the commits to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pace", nargs="+", choices=sorted(PACES), default=["human", "saturating"])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--keep", type=Path, help="build the data directories here, to reuse")
    parser.add_argument("--llm-latency", type=float, default=1.0)
    parser.add_argument("--answers", choices=["realistic", "short"], default="realistic",
                        help="the stand-in's answers (`bench.load`): a real model's, or the short ones before issue 69")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="load-compare-"))
    kept = args.keep or scratch
    try:
        trees: dict[str, tuple[Path | None, Path]] = {}
        for base in args.base:
            checkout = worktree(base, scratch / f"base-{base}")
            trees[base] = (checkout, demo_data(checkout, kept / f"data-{base}"))
        trees["tree"] = (None, demo_data(REPO, kept / "data-tree"))
        results: dict[tuple[str, str], list[list[dict]]] = {}
        for pace in args.pace:
            for run in range(args.runs):
                for name, (tree, data) in trees.items():
                    levels = measure(data, args.sessions, llm_latency=args.llm_latency, tree=tree,
                                     answers=args.answers, **PACES[pace])
                    results.setdefault((name, pace), []).append(levels)
                    for level in levels:
                        level.pop("timeline")
                        print(json.dumps({"tree": name, "pace": pace, "run": run + 1, **level}), flush=True)
        print(f"\n| tree | pace | runs | {args.sessions[0]} session p95 | {args.sessions[-1]} sessions p50 / p95 "
              f"| ratio (p95) | server CPU per turn |")  # fmt: skip
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for (name, pace), runs in results.items():
            median = lambda level, key: statistics.median(r[level][key] for r in runs)  # noqa: E731
            one, many = median(0, "p95_s"), median(-1, "p95_s")
            print(f"| {name} | {pace} | {len(runs)} | {one:.2f} s | {median(-1, 'p50_s'):.2f} / {many:.2f} s | "
                  f"{many / one:.1f}x | {median(-1, 'server_cpu_ms_per_turn'):.0f} ms |")  # fmt: skip
    finally:
        for base in args.base:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(scratch / f"base-{base}")],
                           capture_output=True)  # fmt: skip
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
