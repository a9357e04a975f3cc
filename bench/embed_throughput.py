"""Raw embedding throughput on the demo abstracts, beside the whole `ingest demo` run.

    .venv/bin/python bench/embed_throughput.py [--data-dir data/local]
Embeds the catalog's title+abstract texts with the dense model alone, then with dense + BM25 (what the
ingest path does), and prints texts per second for each.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from scholarloom.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    texts = [f"{p.title}. {p.abstract}".strip() for p in settings.catalog().iter_papers()]
    embedder = settings.embedder()
    embedder.dense(["warm up"])
    start = time.perf_counter()
    embedder.dense(texts)
    dense_seconds = time.perf_counter() - start
    start = time.perf_counter()
    embedder.documents(texts)
    both_seconds = time.perf_counter() - start
    print(
        f"{len(texts)} texts: dense only {len(texts) / dense_seconds:.1f}/s, dense + BM25 {len(texts) / both_seconds:.1f}/s"
    )


if __name__ == "__main__":
    main()
