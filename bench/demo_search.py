"""Search latency on the demo corpus (embedded Qdrant, qdrant-client local mode): p50/p95 per query kind.

Run after `scholarloom ingest demo` (with the server stopped, the embedded index allows one process):
    .venv/bin/python -m bench.demo_search [--data-dir data/local] [--queries 100]
Queries are the first sentences of randomly chosen demo abstracts (seeded), so they are realistic and
reproducible. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from datetime import date
from pathlib import Path

from retrieval.search.hybrid import split_sentences
from retrieval.vectors.index import Filters
from scholarloom.settings import Settings


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, round(0.95 * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    archive = settings.archive()  # what the tools, pages and API search through
    catalog, index, embedder = archive.catalog, archive.index, archive.embedder
    papers = [p for p in catalog.iter_papers() if p.abstract]
    rng = random.Random(7)
    queries = [
        split_sentences(p.abstract)[0][:300] for p in rng.sample(papers, args.queries) if split_sentences(p.abstract)
    ]
    embedder.query("warm up")
    kinds = {
        "query embedding only": lambda q: embedder.query(q),
        "hybrid search, no filter": lambda q: archive.search(q, limit=10),
        "hybrid search, category filter (cs.LG)": lambda q: archive.search(q, Filters(categories=("cs.LG",)), limit=10),
        "hybrid search, date filter (2025)": lambda q: archive.search(
            q, Filters(published_from=date(2025, 1, 1), published_to=date(2025, 12, 31)), limit=10
        ),
        "hybrid search + 2 matching sentences per hit": lambda q: archive.search(q, limit=10, sentences=2),
    }
    print(f"{len(queries)} queries over {index.count()} points ({settings.data_dir})\n")
    print("| what | p50 ms | p95 ms |\n| --- | --- | --- |")
    for name, run in kinds.items():
        samples = []
        for q in queries:
            start = time.perf_counter()
            run(q)
            samples.append((time.perf_counter() - start) * 1000)
        p50, p95 = percentiles(samples)
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")
    settings.close()


if __name__ == "__main__":
    main()
