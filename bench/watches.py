"""What re-running saved questions costs (issue 42): the `watches` job's work, one search within each question's
scope and one row written, timed for N questions on an archive.

    .venv/bin/python -m bench.watches --data-dir /tmp/j42 --questions 10 50 90

The questions are the judged set's (`tests/fixtures/judged_questions.jsonl`: topics, facts, people, absent
subjects), saved for a bench user and removed after. A run does not read what the update brought (no scan of new
papers): its cost is N searches, whatever M papers came, and each search costs what the index's search costs at
that size (BENCHMARKS.md: search at 10k, 100k and a million points). Prints ms per question and the total.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from sqlmodel import Session

from bench.precision import load
from jobs.watches import rerun
from retrieval.library.watches import SavedQuestion, Watches
from scholarloom.settings import Settings

USER = "bench-watches"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--questions", type=int, nargs="+", default=[10, 50, 90])
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    archive, uploads = settings.archive(), settings.uploads()
    watches = Watches(archive.catalog.engine)
    queries = [q.question for q in load()]
    print(f"{archive.counts().get('papers', '?')} papers in the archive\n")
    print("| questions | run | total | per question: median / p95 | with news |")
    print("| --- | --- | --- | --- | --- |")
    try:
        archive.search("warm the models up", limit=5)
        for count in args.questions:
            rows = [SavedQuestion(owner=USER, query=queries[n % len(queries)], scope="all") for n in range(count)]
            with Session(watches.engine, expire_on_commit=False) as session:  # as `Watches.save`, past its quota
                session.add_all(rows)
                session.commit()
            # The first run embeds each question (a serving process keeps the embeddings: the next runs, after the
            # next updates, find them) and finds every answer new; the next finds nothing new.
            for name in ("first", "next"):
                times, news = [], 0
                start = time.perf_counter()
                for question in watches.of(USER):
                    one = time.perf_counter()
                    news += rerun(archive, watches, question, uploads.library_ids) is not None
                    times.append(time.perf_counter() - one)
                total = time.perf_counter() - start
                ordered = sorted(times)
                p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
                print(f"| {count} | {name} | {total:.2f} s | {statistics.median(times) * 1000:.1f} / "
                      f"{p95 * 1000:.1f} ms | {news} |")
            for question in rows:
                watches.forget(USER, question.id)
    finally:
        for question in watches.of(USER):
            watches.forget(USER, question.id)
        settings.close()


if __name__ == "__main__":
    main()
