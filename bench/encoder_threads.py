"""Several processes embedding at once, first each encoder with onnxruntime's default threads (one per core), then
with one thread each: the contention `SCHOLARLOOM_EMBED_THREADS=1` avoids where processes share a machine's cores.

    .venv/bin/python -m bench.encoder_threads [--models data/local/models] [--processes 3] [--texts 400]

Prints each configuration's seconds per process (every process embeds the same texts once, after a warm-up).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "Sentence number {} about neural retrieval of scientific papers and their abstracts with transformers. "


def embed(models: Path, threads: int, texts: int) -> float:
    """One process's work: seconds to embed `texts` sentences (after loading the model and a warm-up batch)."""
    sys.path.insert(0, str(ROOT))
    from retrieval.vectors.embeddings import Embedder

    embedder = Embedder(models, threads or None)
    sentences = [SENTENCE.format(i) * 3 for i in range(texts)]
    embedder.dense(sentences[:8])
    started = time.perf_counter()
    embedder.dense(sentences)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=ROOT / "data" / "local" / "models")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--one", nargs=2, type=int, metavar=("THREADS", "TEXTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a child: print its seconds
        print(f"{embed(args.models, *args.one):.2f}")
        return
    for threads, label in ((0, "default threads"), (1, "one thread each")):
        command = [sys.executable, "-m", "bench.encoder_threads", "--models", str(args.models),
                   "--one", str(threads), str(args.texts)]  # fmt: skip
        children = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
                    for _ in range(args.processes)]  # fmt: skip
        seconds = [float(child.communicate()[0]) for child in children]
        print(f"{args.processes} processes, {label}: " + ", ".join(f"{s:.2f} s" for s in seconds))


if __name__ == "__main__":
    main()
