"""The encoder on a GPU against the CPU: the same vectors, and the texts per second of each.

    .venv/bin/python -m bench.device_fidelity [--models data/local/models] [--precision float32] [--texts 400]

Embeds demo abstracts (title + abstract, from `data/demo/arxiv_metadata`) on the CPU and with
SCHOLARLOOM_EMBED_DEVICE=cuda, then prints each run's texts/s, where the second one really ran (without
onnxruntime-gpu it falls back to the CPU and says why) and the lowest and mean cosine between the two runs' vectors.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.demo import DEMO_DIR  # noqa: E402
from retrieval.vectors.embeddings import Embedder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, default=ROOT / "data" / "local" / "models")
    parser.add_argument("--precision", default="float32", choices=["float32", "int8"])
    parser.add_argument("--texts", type=int, default=400)
    args = parser.parse_args()
    texts = []
    for source in sorted((DEMO_DIR / "arxiv_metadata").glob("*.jsonl")):
        for line in source.read_text().splitlines():
            row = json.loads(line)
            texts.append(" ".join(f"{row['title']}. {row['abstract']}".split()))
    texts = texts[: args.texts]
    vectors = {}
    for device in ("cpu", "cuda"):
        embedder = Embedder(args.models, precision=args.precision, device=device)
        embedder.dense(["warm up the model"] * 8)
        ran, note = embedder.encoder_device()
        started = time.perf_counter()
        vectors[device] = embedder.dense(texts)
        seconds = time.perf_counter() - started
        print(f"asked {device}: ran on {ran}, {len(texts) / seconds:.1f} texts/s" + (f" ({note})" if note else ""))
    cosines = (vectors["cpu"] * vectors["cuda"]).sum(axis=1)
    print(f"cosine between the runs over {len(texts)} abstracts: lowest {cosines.min():.6f}, mean {cosines.mean():.6f}")


if __name__ == "__main__":
    main()
