"""The dense encoder's cost per text by batch size, on the demo's titles and abstracts (read from `data/demo`, no
loaded catalog needed), and whether the vectors differ from one text at a time.

    .venv/bin/python -m bench.encoder_batch [--models data/local/models] [--texts 300] [--threads 1]
                                            [--precision int8|float32]

Prints, for each batch size, the CPU and wall milliseconds per text and the largest difference from batch size 1.
It runs the encoder itself (`DenseEncoder.vectors`), so int8's sizes are measured too although the product runs
int8 one text at a time: its vectors depend on their batch (`retrieval.vectors.embeddings.dense_batch`;
BENCHMARKS.md, "Ingest and the encoder").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "data" / "demo" / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl"


def texts(count: int) -> list[str]:
    """Titles and abstracts as the index embeds them (title, newline, abstract), in the file's order."""
    out = []
    with SNAPSHOT.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            out.append(" ".join(record["title"].split()) + "\n" + " ".join(record["abstract"].split()))
            if len(out) == count:
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=ROOT / "data" / "local" / "models")
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1, help="ONNX threads (0: one per core)")
    parser.add_argument("--sizes", default="1,2,4,8,16,32")
    parser.add_argument("--precision", default="float32", choices=["float32", "int8"])
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from retrieval.vectors.embeddings import Embedder

    encoder, _ = Embedder(args.models, args.threads or None, precision=args.precision)._load()
    sample = texts(args.texts)
    encoder.vectors(sample[:8], 8)  # the model loaded and warm
    print(f"{len(sample)} titles + abstracts, {sum(map(len, sample)) / len(sample):.0f} characters on average, "
          f"{args.threads or 'default'} ONNX thread(s), {args.precision}\n")  # fmt: skip
    print("| batch size | CPU ms per text | wall ms per text | largest difference from batch size 1 |")
    print("|---|---|---|---|")
    first = None
    for size in (int(s) for s in args.sizes.split(",")):
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = encoder.vectors(sample, size)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        first = vectors if first is None else first
        difference = float(np.abs(vectors - first).max())
        print(f"| {size} | {cpu / len(sample) * 1000:.1f} | {wall / len(sample) * 1000:.1f} | {difference:.1e} |")


if __name__ == "__main__":
    main()
