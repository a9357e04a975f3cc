"""Why the hybrid has no learned second stage: on SciFact a learned ranker memorises documents.

    pip install lightgbm==4.7.0   # only for this experiment; the product does not use it
    .venv/bin/python -m bench.retrieval_ranker /path/to/scifact_beir --models DIR [--cache /tmp/scifact-variants]

From the vectors `bench/retrieval_variants.py` cached (windows of 80 tokens, no overlap: the product's), each
train query's candidates (the best 100 papers of each side, joined) get every score the store could give:
the best, whole-abstract, second-best and mean window dense score, the BM25 score, the share of the query's
words present; each over the best candidate's, minus it and as a rank; plus the query's length in words and
the abstract's in windows. A LambdaMART forest (LightGBM) is fitted on these and cross-validated on train in
two ways: folds of queries (the usual way), and folds that never split two queries judged on the same
document. SciFact writes several claims from one abstract, so the first way lets the forest meet a held-out
query's document in training. The fixed mix (0.7 dense + 0.3 BM25, each over its best: the product's mix when
this was measured) is scored on the same candidates. Only train is read.
"""

from __future__ import annotations

import random

import numpy as np

from bench.retrieval_variants import Bm25Scorer, _head, experiment_arguments, windows_of
from ingest.beir import read_beir
from retrieval.vectors.embeddings import Embedder

SETTINGS = [(3, 100, 200), (15, 50, 300), (63, 100, 500)]  # leaves, least rows per leaf, rounds
DISCOUNT = 1 / np.log2(np.arange(2, 12))


def _transforms(v: np.ndarray) -> list[np.ndarray]:
    high = float(v.max())
    return [v / high if high > 0 else v, v - high, (v[None, :] > v[:, None]).sum(axis=1) / len(v)]


def _ndcg(scores: np.ndarray, relevant: np.ndarray) -> float:
    if not relevant.any():
        return 0.0
    order = np.argsort(-scores, kind="stable")[:10]
    return float((relevant[order] * DISCOUNT[: len(order)]).sum() / DISCOUNT[: min(int(relevant.sum()), 10)].sum())


def _folds(queries: list[str], qrels: dict, by_document: bool, k: int = 5) -> list[list[str]]:
    shuffled = queries[:]
    random.Random(0).shuffle(shuffled)
    if not by_document:
        return [shuffled[i::k] for i in range(k)]
    parent = {q: q for q in shuffled}

    def root(q: str) -> str:
        while parent[q] != q:
            parent[q] = parent[parent[q]]
            q = parent[q]
        return q

    first_judged: dict[str, str] = {}
    for q in shuffled:
        for doc in qrels[q]:
            parent[root(q)] = root(first_judged.setdefault(doc, q))
    groups: dict[str, list[str]] = {}
    for q in shuffled:
        groups.setdefault(root(q), []).append(q)
    folds: list[list[str]] = [[] for _ in range(k)]
    for group in sorted(groups.values(), key=len, reverse=True):
        min(folds, key=len).extend(group)
    return folds


class Candidates:
    """Each train query's candidates and their features, from the cached vectors."""

    def __init__(self, args) -> None:
        corpus, self.queries, qrels = read_beir(args.beir_dir)
        self.train = qrels["train"]
        embedder = Embedder(args.models)
        self.doc_index = {r["_id"]: j for j, r in enumerate(corpus)}
        all_ids = sorted(set(qrels["train"]) | set(qrels["test"]))  # the cache's row order
        qv = np.load(args.cache / "queries.npy")[[all_ids.index(q) for q in sorted(self.train)]]
        self.full = qv @ np.load(args.cache / "docs.npy").T
        _, owners = windows_of(corpus, embedder, 80, False)
        self.window_scores = qv @ np.load(args.cache / "windows_80n.npy").T
        self.bm25 = Bm25Scorer(embedder, [f"{_head(r)} {r.get('text') or ''}".strip() for r in corpus])
        _, self.sparse_model = embedder._load()
        order = np.argsort(owners, kind="stable")
        bounds = np.searchsorted(owners[order], np.arange(len(corpus) + 1))
        self.windows = [order[bounds[j] : bounds[j + 1]] for j in range(len(corpus))]

    def rows(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per train query: (features, relevance, the fixed mix's scores) of its candidates."""
        return {q: self.row(i, q) for i, q in enumerate(sorted(self.train))}

    def row(self, i: int, q: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        full, window_scores, windows = self.full, self.window_scores, self.windows
        sparse = self.bm25.scores(self.queries[q])
        terms = next(iter(self.sparse_model.query_embed(self.queries[q]))).indices.tolist()
        best = full[i].copy()
        for j, columns in enumerate(windows):
            if len(columns):
                best[j] = max(best[j], window_scores[i, columns].max())
        candidates = np.union1d(np.argsort(-best)[:100], np.argsort(-sparse)[:100])
        per_window = [np.sort(window_scores[i, windows[j]])[::-1] for j in candidates]
        pairs = list(zip(per_window, candidates, strict=True))
        second = np.array([w[1] if len(w) > 1 else (w[0] if len(w) else full[i, j]) for w, j in pairs])
        mean = np.array([w.mean() if len(w) else full[i, j] for w, j in pairs])
        present = np.zeros(len(candidates))
        for t in terms:
            hits = {j for j, _ in self.bm25.postings.get(t, ())}
            present += np.array([j in hits for j in candidates]) / max(len(terms), 1)
        columns = [best[candidates], sparse[candidates], present, full[i, candidates], second, mean]
        x = np.stack(
            [t for c in columns for t in _transforms(c.astype(np.float64))]
            + [np.full(len(candidates), len(terms)), np.array([len(windows[j]) for j in candidates])],
            axis=1,
        )
        judged = [self.doc_index[d] for d in self.train[q] if d in self.doc_index]
        relevant = np.isin(candidates, judged).astype(float)
        return x, relevant, 0.7 * np.maximum(x[:, 0], 0) + 0.3 * x[:, 3]


def _cross_validated(lgb, rows, folds: list[list[str]], params: dict, rounds: int) -> float:
    total = []
    for k, held_out in enumerate(folds):
        fit = [q for j, f in enumerate(folds) if j != k for q in f]
        data = lgb.Dataset(
            np.concatenate([rows[q][0] for q in fit]),
            np.concatenate([rows[q][1] for q in fit]),
            group=[len(rows[q][1]) for q in fit],
        )
        booster = lgb.train(params, data, rounds)
        total += [_ndcg(booster.predict(rows[q][0]), rows[q][1]) for q in held_out]
    return float(np.mean(total))


def main() -> None:
    args = experiment_arguments(__doc__)
    try:
        import lightgbm as lgb
    except ImportError:
        raise SystemExit("this experiment needs LightGBM: pip install lightgbm==4.7.0") from None
    found = Candidates(args)
    rows, train = found.rows(), found.train
    print(f"SciFact train, {len(rows)} queries, 5-fold cross-validated nDCG@10\n")
    print("| ranker | folds of queries | folds that never split a judged document |\n|---|---|---|")
    fold_sets = {way: _folds(sorted(train), train, way) for way in (False, True)}
    mix = {way: np.mean([_ndcg(rows[q][2], rows[q][1]) for f in folds for q in f]) for way, folds in fold_sets.items()}
    print(f"| fixed mix (0.7 dense + 0.3 BM25) | {mix[False]:.4f} | {mix[True]:.4f} |")
    for leaves, least, rounds in SETTINGS:
        params = {
            "objective": "lambdarank", "learning_rate": 0.02, "num_leaves": leaves, "min_data_in_leaf": least,
            "bagging_fraction": 0.8, "bagging_freq": 1, "feature_fraction": 0.7, "seed": 0, "verbose": -1,
        }  # fmt: skip
        scores = {way: _cross_validated(lgb, rows, folds, params, rounds) for way, folds in fold_sets.items()}
        print(f"| LambdaMART, {leaves} leaves, {rounds} trees | {scores[False]:.4f} | {scores[True]:.4f} |", flush=True)


if __name__ == "__main__":
    main()
