"""Embedding throughput: the ingest path's abstracts per second against the raw model, in one run.

    .venv/bin/python -m bench.embed_throughput [--data-dir data/local]

Needs a data dir with the demo corpus loaded (`make demo` or `scholarloom ingest demo`). In one process:
1. the raw dense model on each paper's title + abstract (what a plain pipeline would embed);
2. the raw dense model on exactly the texts our pipeline embeds (title + abstract, plus the sentence
   windows of abstracts longer than a window), and BM25 on the abstracts;
3. the whole ingest path, `ingest.indexing.index_papers`, on a copy of the catalog into a fresh index:
   windowing, both models, the store's upserts, the ledger commits and the final index build.
Prints abstracts per second for each and the ratios the retrieval issue asks about.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import text  # noqa: E402

from ingest.indexing import index_papers  # noqa: E402
from ingest.report import Summary  # noqa: E402
from ingest.writer import Windowing, Writer, abstract_reading, index_text  # noqa: E402
from retrieval.scholarly.catalog import Catalog  # noqa: E402
from retrieval.vectors.index import Index  # noqa: E402
from scholarloom.settings import Settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data" / "local")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    papers = list(settings.catalog().iter_papers())
    if not papers:
        raise SystemExit(f"no papers in {args.data_dir}: run `scholarloom ingest demo` first")
    embedder = settings.embedder()
    embedder.dense(["warm up"])
    texts = [index_text(p) for p in papers]
    readings = [abstract_reading(p, embedder.pieces, Windowing()) for p in papers]
    windows = [key for r in readings for key in r.keys()[1:]]

    started = time.perf_counter()
    embedder.dense(texts)
    raw_whole = len(papers) / (time.perf_counter() - started)

    started = time.perf_counter()
    embedder.windowed(readings)
    embedder.sparse(texts)
    raw_same = len(papers) / (time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(settings.catalog_url.removeprefix("sqlite:///"))
        shutil.copy(source, Path(tmp) / "catalog.db")
        catalog = Catalog(f"sqlite:///{Path(tmp) / 'catalog.db'}")
        with catalog.engine.begin() as connection:
            connection.execute(text("DELETE FROM ingest_ledger WHERE stage = 'index'"))
        index = Index.open("throughput", path=Path(tmp) / "index")
        summary = Summary()
        started = time.perf_counter()
        index_papers(Writer(catalog, index, embedder), summary)
        pipeline_seconds = time.perf_counter() - started
        assert summary.counts["indexed"] == len(papers)
        points = index.count()
        index.close()
        catalog.close()
    pipeline = len(papers) / pipeline_seconds

    print(f"{len(papers)} abstracts; {len(windows)} windows of {Windowing().tokens} tokens; {points} index points\n")
    print("| run | abstracts/s |\n|---|---|")
    print(f"| raw dense model, title + abstract only | {raw_whole:.1f} |")
    print(f"| raw models on what the pipeline embeds (dense: abstracts with their windows; BM25) | {raw_same:.1f} |")
    print(f"| ingest path (`index_papers`: windows, models, upserts, ledger, index build) | {pipeline:.1f} |")
    print(f"\npipeline / raw models on the same texts: {pipeline / raw_same:.0%}")
    print(f"pipeline / raw dense model on title + abstract only: {pipeline / raw_whole:.0%}")


if __name__ == "__main__":
    main()
