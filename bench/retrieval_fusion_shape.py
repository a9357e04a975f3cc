"""Two more fusion shapes on SciFact train, from the vectors `bench/retrieval_variants.py` cached:

    .venv/bin/python bench/retrieval_fusion_shape.py /path/to/scifact_beir --models DIR [--cache /tmp/scifact-variants]

1. sharpened scores: w * (d / d_max)^p + (1 - w) * (s / s_max)^q;
2. a paper's dense score = its best window + lambda * its second-best window;
3. a third signal: BM25 over titles alone, weight t.
Windows of 80 tokens without overlap (the product's); train nDCG@10 only (the baseline also on test).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retrieval_variants import Bm25Scorer, _head, ranked, top, windows_of  # noqa: E402

from retrieval.embeddings import Embedder  # noqa: E402
from scholarloom.benchmarks import evaluate, read_beir  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("beir_dir", type=Path)
    parser.add_argument("--models", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/scifact-variants"))
    args = parser.parse_args()
    corpus, queries, qrels = read_beir(args.beir_dir)
    doc_ids = [r["_id"] for r in corpus]
    embedder = Embedder(args.models)
    texts = [f"{_head(r)} {r.get('text') or ''}".strip() for r in corpus]
    query_ids = sorted(set(qrels["train"]) | set(qrels["test"]))
    qpos = {q: i for i, q in enumerate(query_ids)}
    qv, docs = np.load(args.cache / "queries.npy"), np.load(args.cache / "docs.npy")
    dense_full = qv @ docs.T
    bm25 = Bm25Scorer(embedder, texts)
    sparse = np.stack([bm25.scores(queries[q]) for q in query_ids])
    _, owners = windows_of(corpus, embedder, 80, False)
    window_scores = qv @ np.load(args.cache / "windows_80n.npy").T
    best, second = dense_full.copy(), np.full_like(dense_full, -1.0)
    order = np.argsort(owners, kind="stable")
    bounds = np.searchsorted(owners[order], np.arange(len(corpus) + 1))
    for j in range(len(corpus)):
        columns = order[bounds[j] : bounds[j + 1]]
        if len(columns):
            sorted_scores = np.sort(window_scores[:, columns], axis=1)
            best[:, j] = np.maximum(best[:, j], sorted_scores[:, -1])
            second[:, j] = sorted_scores[:, -2] if sorted_scores.shape[1] > 1 else sorted_scores[:, -1]

    title_bm25 = Bm25Scorer(embedder, [r.get("title") or "" for r in corpus])
    title_sparse = np.stack([title_bm25.scores(queries[q]) for q in query_ids])

    def ndcg(split: str, dense: np.ndarray, w: float, p: float = 1.0, q_exp: float = 1.0, t: float = 0.0) -> float:
        run = {}
        for q in qrels[split]:
            i = qpos[q]
            d, s, ti = top(dense[i], 100), top(sparse[i], 100), top(title_sparse[i], 100)
            d_max, s_max, t_max = max(d.values()), max(s.values()) or 1.0, max(ti.values()) or 1.0
            fused = {
                k: w * (max(d.get(k, 0.0), 0.0) / d_max) ** p
                + (1 - w) * (s.get(k, 0.0) / s_max) ** q_exp
                + t * ti.get(k, 0.0) / t_max
                for k in d.keys() | s.keys()
            }
            run[q] = ranked(fused, doc_ids)
        return evaluate(run, qrels[split]).ndcg10

    print(f"baseline (w 0.7): train {ndcg('train', best, 0.7):.4f}, test {ndcg('test', best, 0.7):.4f}")
    for w, p, q_exp in itertools.product((0.6, 0.7, 0.8), (1, 2, 3, 4), (0.5, 1.0)):
        print(f"sharpened w {w} p {p} q {q_exp}: train {ndcg('train', best, w, p, q_exp):.4f}", flush=True)
    for lam in (0.1, 0.2, 0.3):
        print(f"second window lambda {lam}: train {ndcg('train', best + lam * second, 0.7):.4f}", flush=True)
    for t, w in itertools.product((0.05, 0.1, 0.15, 0.2), (0.65, 0.7, 0.75)):
        print(f"title BM25 t {t} w {w}: train {ndcg('train', best, w, t=t):.4f}", flush=True)


if __name__ == "__main__":
    main()
