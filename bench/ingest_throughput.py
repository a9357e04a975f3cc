"""End-to-end ingest throughput of the demo corpus beside the raw embedding throughput, in one run.

    .venv/bin/python -m bench.ingest_throughput

In one process, on a fresh temporary data directory:
1. the whole `scholarloom ingest demo` path (what `ingest.demo.load_demo` does): parsing every source file,
   validation, catalog upserts with identity matching, the ledger, citation linking, windowing,
   both embedding models, the store's upserts and the final index build; papers per second;
2. the raw dense model alone on the same papers' title + abstract (what a plain pipeline would embed),
   texts per second, after the models are warm.
Prints both and their ratio.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.demo import DEMO_DIR, demo_sources  # noqa: E402
from ingest.indexing import index_papers  # noqa: E402
from ingest.pipeline import finish_catalog, load_records  # noqa: E402
from ingest.report import Summary  # noqa: E402
from ingest.writer import Writer, index_text  # noqa: E402
from scholarloom.settings import Settings  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        embedder = settings.embedder()
        embedder.dense(["warm up the model"])  # model loading is not ingest
        catalog, index = settings.catalog(), settings.index()
        summary = Summary()
        start = time.perf_counter()  # what `load_demo` does, timed in its two phases
        for source in demo_sources(DEMO_DIR):
            load_records(catalog, source.stage, source.read(), summary)
        finish_catalog(catalog)
        catalog_seconds = time.perf_counter() - start
        index_papers(Writer(catalog, index, embedder), summary)
        ingest_seconds = time.perf_counter() - start
        papers = list(catalog.iter_papers())
        texts = [index_text(p) for p in papers]
        start = time.perf_counter()
        embedder.dense(texts)
        raw_seconds = time.perf_counter() - start
        print(f"demo corpus: {summary.line()}")
        print(f"papers: {len(papers)}; index points: {index.count()}")
        print(f"end-to-end ingest: {ingest_seconds:.1f} s, {len(papers) / ingest_seconds:.1f} papers/s")
        print(f"  of which catalog (parse, validate, merge, identity, ledger, links): {catalog_seconds:.1f} s")
        print(f"raw dense model on title + abstract: {raw_seconds:.1f} s, {len(texts) / raw_seconds:.1f} texts/s")
        print(f"ingest / raw: {raw_seconds / ingest_seconds:.0%}")
        settings.close()


if __name__ == "__main__":
    main()
