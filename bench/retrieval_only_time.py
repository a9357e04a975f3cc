"""How long a retrieval-only turn takes (`assistant.retrieval_only`: the chat with no model, or when the model
fails), on the judged questions of one kind (`tests/fixtures/judged_questions.jsonl`): the search, the full-text
passages, the answer line.

    .venv/bin/python -m bench.retrieval_only_time --data-dir /tmp/demo [--kind fact] [--repeat 3] [--alternate]

Each question is asked once to warm up, then `--repeat` times; prints the p50, p95 and mean of a turn in
milliseconds. `--alternate` measures twice in turn without and with the passages weighed for a fact's answer line
beyond what the search shows (`_more_passages`, left out by replacing it here), to price them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

import assistant.retrieval_only as retrieval_only
from assistant.agent import Agent
from assistant.tools import ToolDeps
from bench.precision import load
from scholarloom.settings import Settings


class _Quiet:  # the turn's UI: nothing shown
    async def tool_started(self, name, arguments): return None  # noqa: E704
    async def tool_finished(self, handle, result): return None  # noqa: E704
    async def stream(self, text): return None  # noqa: E704
    async def finish(self, answer, cards): return None  # noqa: E704


async def _turns(archive, questions: list[str], repeat: int) -> list[float]:
    times = []
    for round_ in range(repeat + 1):
        for question in questions:
            started = time.perf_counter()
            await Agent(None).turn(ToolDeps(archive), [], question, _Quiet())
            if round_:
                times.append((time.perf_counter() - started) * 1000)
    return sorted(times)


def _report(label: str, times: list[float]) -> None:
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"{label}: p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, mean {statistics.mean(times):.1f} ms "
          f"({len(times)} turns)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--kind", default="fact", choices=("topic", "fact", "people", "absent"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--alternate", action="store_true")
    args = parser.parse_args()
    archive = Settings(data_dir=args.data_dir).archive()
    questions = [q.question for q in load() if q.kind == args.kind]
    if not args.alternate:
        _report(f"{len(questions)} {args.kind} questions", asyncio.run(_turns(archive, questions, args.repeat)))
        return
    more = retrieval_only._more_passages
    for _ in range(2):
        retrieval_only._more_passages = lambda *_: []
        _report("without the extra passages", asyncio.run(_turns(archive, questions, args.repeat)))
        retrieval_only._more_passages = more
        _report("with the extra passages   ", asyncio.run(_turns(archive, questions, args.repeat)))


if __name__ == "__main__":
    main()
