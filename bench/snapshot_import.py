"""A synthetic arXiv metadata snapshot, and the bulk import's throughput on it beside the raw encoder's.

    .venv/bin/python -m bench.snapshot_import [--papers 5000] [--keep FILE] [--no-index]

The snapshot is made of real text recombined (as `bench/search_latency.py` does): every record is one of the
demo's arXiv snapshot records (`data/demo/arxiv_metadata`) with a new id, its title and abstract drawn from two
other records, and its authors from a third, so names repeat across papers the way a field's do. It is written as
gzip, as arXiv serves it. Then, on a fresh data directory, in one process:

1. `ingest.snapshot.import_snapshot` (read, filter, parse, validate, merge with identity matching, the ledger),
   then `finish_catalog` (citation links, researchers refined): records per second into the catalog;
2. with indexing, `ingest.indexing.index_papers` on what it wrote: papers per second from file to searchable;
3. the raw float32 dense model alone (on the same device, in this process, one text per abstract) on the same
   papers' title + abstract, texts per second, after the models are warm.
Prints the three and the ratio of (2) to (3) (issue 38's goal: at least 1.2). The encoder is the product's, as
the settings make it: SCHOLARLOOM_EMBED_PRECISION, _DEVICE (so this runs as is on a GPU machine), _WORKERS and
_THREADS.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.demo import DEMO_DIR  # noqa: E402
from ingest.indexing import index_papers  # noqa: E402
from ingest.pipeline import finish_catalog  # noqa: E402
from ingest.report import Summary  # noqa: E402
from ingest.snapshot import import_snapshot  # noqa: E402
from ingest.writer import Writer, index_text  # noqa: E402
from retrieval.vectors.embeddings import Embedder  # noqa: E402
from retrieval.vectors.encoder import Precision  # noqa: E402
from scholarloom.settings import Settings  # noqa: E402

SOURCES = sorted((DEMO_DIR / "arxiv_metadata").glob("*.jsonl"))


def synthetic_snapshot(path: Path, papers: int, seed: int = 7) -> Path:
    """`papers` records recombined from the demo's real ones, with ids 9901.00001 on (never a real paper's)."""
    pool = {}
    for source in SOURCES:
        for line in source.read_text().splitlines():
            row = json.loads(line)
            pool[row["id"]] = row
    rows = list(pool.values())
    draw = random.Random(seed)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for number in range(papers):
            base, title, text, people = (draw.choice(rows) for _ in range(4))
            record = {**base, "id": f"9901.{number + 1:05d}", "title": title["title"], "abstract": text["abstract"],
                      "authors": people["authors"], "authors_parsed": people.get("authors_parsed"),
                      "doi": None}  # fmt: skip
            out.write(json.dumps(record) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=5000)
    parser.add_argument("--keep", type=Path, help="write the synthetic snapshot here (and reuse it next time)")
    parser.add_argument("--no-index", action="store_true", help="the catalog import alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = args.keep or Path(tmp) / "snapshot.jsonl.gz"
        if not snapshot.exists():
            synthetic_snapshot(snapshot, args.papers)
        settings = Settings(data_dir=Path(tmp) / "data")
        embedder = settings.writing_encoder()
        embedder.dense(["warm up the model"] * 4)  # model loading is not ingest
        device, note = embedder.encoder_device()
        print(f"encoder: {settings.embed_precision} on the {device.upper()}, {settings.embed_workers} process(es) of "
              f"{settings.embed_threads or 'all'} thread(s)" + (f"; {note}" if note else ""))
        raw_encoder = Embedder(settings.models_dir, settings.embed_threads, precision=Precision.FLOAT32,
                               device=settings.embed_device)  # fmt: skip
        raw_encoder.dense(["warm up the model"])
        catalog, index = settings.catalog(), settings.index()
        summary = Summary()
        start = time.perf_counter()
        kept = import_snapshot(catalog, snapshot, summary)
        imported = time.perf_counter() - start
        finish_catalog(catalog)
        catalog_seconds = time.perf_counter() - start
        print(f"snapshot: {snapshot.stat().st_size / 1e6:.1f} MB gzip, {kept} records; {summary.line()}")
        print(f"catalog import: {catalog_seconds:.1f} s, {kept / catalog_seconds:.1f} records/s "
              f"(the records {imported:.1f} s, then the cross-record finish {catalog_seconds - imported:.1f} s)")
        if args.no_index:
            settings.close()
            return
        index_papers(Writer(catalog, index, embedder), summary)
        total = time.perf_counter() - start
        texts = [index_text(p) for p in catalog.iter_papers()]
        start = time.perf_counter()
        raw_encoder.dense(texts)
        raw = time.perf_counter() - start
        print(f"file to searchable: {total:.1f} s, {kept / total:.1f} papers/s; index points {index.count()}")
        print(f"raw float32 dense model on title + abstract: {raw:.1f} s, {len(texts) / raw:.1f} texts/s")
        print(f"import / raw: {(kept / total) / (len(texts) / raw):.2f}x")
        settings.close()


if __name__ == "__main__":
    main()
