"""Where an import's encoder time goes, per precision: the abstracts' own passes, their windows as texts of their
own, the windows pooled from the abstracts' passes instead, and BM25, on the papers of a snapshot file.

    .venv/bin/python -m bench.encoder_work /tmp/snap3000.jsonl.gz [--models data/local/models] [--papers N]

The snapshot is the one `bench/snapshot_import.py --keep FILE` writes. One process, the models warmed first, the
settings' SCHOLARLOOM_EMBED_THREADS (unset: every core).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.writer import abstract_reading, window_texts  # noqa: E402
from retrieval.scholarly.models import Paper  # noqa: E402
from retrieval.vectors.embeddings import Embedder  # noqa: E402


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--models", type=Path, default=ROOT / "data" / "local" / "models")
    parser.add_argument("--papers", type=int, help="the first N papers only")
    args = parser.parse_args()
    with gzip.open(args.snapshot, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][: args.papers]
    papers = [Paper(id=r["id"], title=" ".join(r["title"].split()), abstract=" ".join(r["abstract"].split()))
              for r in rows]  # fmt: skip
    threads = int(os.environ.get("SCHOLARLOOM_EMBED_THREADS", 0)) or None
    print(f"{len(papers)} papers\n\n| precision | abstracts' passes | windows apart (texts) | short abstracts' passes "
          "| windows pooled (with the abstracts) | BM25 |\n|---|---|---|---|---|---|")
    for precision in ("float32", "int8"):
        embedder = Embedder(args.models, threads, precision=precision)
        embedder.dense(["warm up the model"] * 8)
        embedder.sparse(["warm up the model"])
        readings = [abstract_reading(p, embedder.pieces) for p in papers]
        wholes = [r.text for r in readings]
        windows = [t for p, r in zip(papers, readings, strict=True) for t in window_texts(p, r)]
        short = [r.text for r in readings if not r.windows]
        cells = [_timed(lambda: embedder.dense(wholes)), _timed(lambda: embedder.dense(windows)),
                 _timed(lambda: embedder.dense(short)), _timed(lambda: embedder.windowed(readings)),
                 _timed(lambda: embedder.sparse(wholes))]  # fmt: skip
        print(f"| {precision} | {cells[0]:.1f} s | {cells[1]:.1f} s ({len(windows)}) | {cells[2]:.1f} s ({len(short)}) "
              f"| {cells[3]:.1f} s | {cells[4]:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
