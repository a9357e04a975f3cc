"""What re-running saved questions costs (issue 42): the `watches` job's work, one search within each question's
scope and one row written, timed for N questions, after updates of M papers, on archives of different sizes.

    .venv/bin/python -m bench.watches --data-dir /tmp/j42 --questions 10 50 90
    .venv/bin/python -m bench.watches --data-dir /tmp/j42 --work /tmp/w42 --grow 100000 --questions 90 \
        --updates 10 100 1000

The questions are the judged set's (`tests/fixtures/judged_questions.jsonl`: topics, facts, people, absent
subjects), saved for a bench user and removed after. Each is run once on its whole scope (the first run embeds it:
a serving process keeps the embeddings) and then after each update, as the job runs it: searching only the papers
indexed since its last run (`jobs.watches.since_last_run`: the ledger's entries since then), so its cost follows
what the update brought, not the archive's size; `--whole` times each run on the whole scope instead.

`--grow` first copies the data directory to `--work` and adds that many SYNTHETIC papers to the copy's catalog and
index, made as `bench.search_latency` makes its scale corpus from the real demo abstracts (each joins half of one
real abstract to half of another; BM25 from that text, the dense vector the mixture of the two real abstracts'
vectors; abstract points only, no sentence windows). `--updates` adds M more such papers (another seed) before a
run, as an update job would (catalog rows, index points, the graph built); the update's own time is printed apart.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import func
from sqlmodel import Session, select

from bench.precision import load
from bench.search_latency import _base, _synthetic
from jobs.watches import ARRIVED, WHOLE_SCOPE_PAST, rerun, since_last_run
from retrieval.library.watches import SavedQuestion, Watches
from retrieval.scholarly.models import LedgerEntry, Paper, utcnow
from scholarloom.settings import Settings

USER = "bench-watches"


def add_papers(settings: Settings, base, count: int, seed: int, prefix: str) -> float:
    """`count` synthetic papers made from `base` (the real papers, `bench.search_latency._base`) written to the
    catalog and the index, the index's graph built: seconds taken."""
    started = time.perf_counter()
    papers, texts, vectors, _ = base
    index, table = settings.index(), Paper.__table__
    rows: list[dict] = []
    for points in _synthetic(papers, texts, vectors, count, settings.embedder(), seed=seed, rows=rows,
                             prefix=prefix):  # fmt: skip
        for chunk in range(0, len(points), 500):
            index.upsert(points[chunk : chunk + 500])
        with settings.catalog().engine.begin() as connection:
            connection.execute(table.insert(), [row | {
                "primary_category": row["categories"][0] if row["categories"] else None,
                "year": row["published"].year, "topics": [], "sources": ["bench"], "analysed": False,
                "all_authors_matched": False} for row in rows])  # fmt: skip
            connection.execute(LedgerEntry.__table__.insert(), [{"stage": "index", "key": row["id"], "content_hash":
                               "bench", "at": utcnow()} for row in rows])  # as indexing marks it  # fmt: skip
        rows.clear()
    index.optimize()
    return time.perf_counter() - started


def run_all(archive, watches: Watches, library_ids, whole: bool) -> tuple[float, list[float], int, int]:
    """Every bench question run once as `jobs.watches.run_watches` runs them (`whole`: each searches its whole
    scope; else those that can search only the papers indexed since their last run): (total seconds, each
    question's seconds, how many had news, how many searched their whole scope)."""
    times, news, searched_whole = [], 0, 0
    start = time.perf_counter()
    began, questions = datetime.now(timezone.utc), watches.of(USER)
    arrived = None if whole else archive.catalog.ledger_since(ARRIVED, min(q.last_run_at for q in questions),
                                                              WHOLE_SCOPE_PAST)  # fmt: skip
    for question in questions:
        one = time.perf_counter()
        among = since_last_run(question, arrived)
        searched_whole += among is None
        news += rerun(archive, watches, question, library_ids, among=among, ran_at=began) is not None
        times.append(time.perf_counter() - one)
    return time.perf_counter() - start, times, news, searched_whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--questions", type=int, nargs="+", default=[10, 50, 90])
    parser.add_argument("--work", type=Path, help="where --grow copies the data directory to (replaced)")
    parser.add_argument("--grow", type=int, default=0, help="synthetic papers added to the copy first")
    parser.add_argument("--updates", type=int, nargs="*", default=[0], help="papers each update brings before a run")
    parser.add_argument("--whole", action="store_true", help="every run searches each question's whole scope (as "
                        "before session 36: what the runs after an update cost without the ledger)")  # fmt: skip
    args = parser.parse_args()
    data_dir = args.data_dir
    if args.grow or any(args.updates):  # papers are added: to a copy, never to the data directory itself
        if args.work is None:
            parser.error("--grow and --updates need --work (the data directory is copied there first)")
        shutil.rmtree(args.work, ignore_errors=True)
        shutil.copytree(args.data_dir, args.work)
        data_dir = args.work
    settings = Settings(data_dir=data_dir)
    base = _base(settings, (args.work or Path("/tmp")) / "watches-base-dense.npy") if args.work else None
    if args.grow:
        print(f"grew the copy by {args.grow:,} synthetic papers in "
              f"{add_papers(settings, base, args.grow, 7, 'syn'):.0f} s")  # fmt: skip
    archive, uploads = settings.archive(), settings.uploads()
    watches = Watches(archive.catalog.engine)
    queries = [q.question for q in load()]
    with Session(archive.catalog.engine) as session:  # (the kept counts do not see the bulk-written rows)
        papers = session.exec(select(func.count()).select_from(Paper)).one()
    print(f"{papers:,} papers in the archive, {archive.index.count():,} index points\n")
    print("| questions | run | update brought | update took | searched whole | run total | per question: median / p95 "
          "| with news |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    try:
        archive.search("warm the models up", limit=5)
        added = 0
        for count in args.questions:
            rows = [SavedQuestion(owner=USER, query=queries[n % len(queries)], scope="all") for n in range(count)]
            with Session(watches.engine, expire_on_commit=False) as session:  # as `Watches.save`, past its quota
                session.add_all(rows)
                session.commit()
            for number, update in enumerate(["-", *args.updates]):
                took = "-"
                if update not in ("-", 0):
                    added += 1
                    took = f"{add_papers(settings, base, update, 100 + added, f'up{added:03d}-'):.1f} s"
                total, times, news, whole = run_all(archive, watches, uploads.library_ids, number == 0 or args.whole)
                ordered = sorted(times)
                p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
                name = "first (embeds)" if number == 0 else "after an update"
                print(f"| {count} | {name} | {update} | {took} | {whole} | {total:.2f} s | "
                      f"{statistics.median(times) * 1000:.1f} / {p95 * 1000:.1f} ms | {news} |")
            for question in rows:
                watches.forget(USER, question.id)
    finally:
        for question in watches.of(USER):
            watches.forget(USER, question.id)
        settings.close()


if __name__ == "__main__":
    main()
