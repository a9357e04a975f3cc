"""Checks the ONNX encoder we build against the reference PyTorch model, outside the product's venv.

The product never needs torch. To run this check once (about 1.7 GB of torch from the machine's disk):
    python3 -m venv /tmp/tvenv && /tmp/tvenv/bin/pip install torch==2.13.0 transformers
    .venv/bin/python -m bench.check_embeddings --export /tmp/ours.npy            # our vectors (fastembed + ONNX)
    /tmp/tvenv/bin/python -m bench.check_embeddings --reference /tmp/ours.npy    # torch on the same weights
It prints the lowest and mean cosine between the two on the sentences below plus 200 demo abstracts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

SENTENCES = [
    "A man is eating food.",
    "Hindsight logging replays log statements from checkpoints after training.",
    "Semi-supervised classification with graph convolutional networks.",
    "Diphoton production cross sections at the Tevatron and the LHC.",
    "",
    "x " * 400,
]
REPO = Path(__file__).resolve().parent.parent


def texts() -> list[str]:
    rows = (REPO / "data/demo/arxiv_metadata/arxiv-metadata-oai-snapshot.head200.jsonl").read_text().splitlines()
    return SENTENCES + [json.loads(r)["abstract"] for r in rows]


def export(path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from retrieval.vectors.embeddings import Embedder

    with tempfile.TemporaryDirectory() as models:
        np.save(path, Embedder(Path(models)).dense(texts()))


def reference(ours_path: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    zip_path = REPO / ".venv/lib/python3.11/site-packages/all_minilm_l6_v2/model.zip"  # the weights we ship
    with tempfile.TemporaryDirectory() as folder:
        zipfile.ZipFile(zip_path).extractall(folder)
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModel.from_pretrained(folder).eval()
        batch = tokenizer(texts(), padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        theirs = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    ours = np.load(ours_path)
    cosines = (ours * theirs).sum(1)
    print(f"{len(cosines)} texts: min cosine {cosines.min():.7f}, mean {cosines.mean():.7f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--export", type=Path)
    group.add_argument("--reference", type=Path)
    args = parser.parse_args()
    if args.export:
        export(args.export)
    else:
        reference(args.reference)
