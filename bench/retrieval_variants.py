"""Why the hybrid is built the way it is: every variant tried, scored on SciFact train (and test), fast.

    .venv/bin/python -m bench.retrieval_variants /path/to/scifact_beir [--cache /tmp/scifact-variants]

The product's harness (`scholarloom bench retrieval`) indexes through the real pipeline and store, which
takes minutes per configuration. To compare many variants, this script embeds each text once with the
product's own models (dense MiniLM, fastembed BM25 with our stop words, the product's sentence windows),
caches the vectors, and scores in numpy the way the store does (exact cosine; BM25 with Qdrant's IDF,
ln(1 + (N - n + 0.5) / (n + 0.5))), fusing with `retrieval.vectors.index.fuse`. Choices are made on train; test
is printed beside for the record. The final configuration is then measured once through the harness.
Embedding everything takes about 45 minutes here; the cache makes reruns take a minute.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.beir import read_beir  # noqa: E402
from ingest.writer import Windowing, abstract_reading  # noqa: E402
from retrieval.scholarly.models import Paper  # noqa: E402
from retrieval.search.evaluation import evaluate  # noqa: E402
from retrieval.vectors.embeddings import BM25_AVG_LEN, Embedder, split_sentences  # noqa: E402
from retrieval.vectors.index import FusionParams, fuse  # noqa: E402

WINDOWS = [(80, False), (80, True), (128, True), (128, False), (256, True)]  # the product's choice first


def _cached(path: Path, build):
    if path.exists():
        return np.load(path, allow_pickle=False)
    value = build()
    np.save(path, value)
    return value


def _head(row: dict) -> str:
    title = (row.get("title") or "").rstrip()
    return title if title.endswith((".", "?", "!")) else title + "."


def experiment_arguments(doc: str | None) -> argparse.Namespace:
    """The arguments of the experiments that read this script's cache (`retrieval_fusion_shape`, `retrieval_ranker`)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("beir_dir", type=Path)
    parser.add_argument("--models", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/scifact-variants"))
    return parser.parse_args()


class Experiment:
    """What the experiments that read this script's cache share: SciFact, the product's encoder, the cached
    query and document vectors, and BM25 scores of every query over every document."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.corpus, self.queries, self.qrels = read_beir(args.beir_dir)
        self.doc_ids = [r["_id"] for r in self.corpus]
        self.embedder = Embedder(args.models)
        self.texts = [f"{_head(r)} {r.get('text') or ''}".strip() for r in self.corpus]
        self.query_ids = sorted(set(self.qrels["train"]) | set(self.qrels["test"]))
        self.qpos = {q: i for i, q in enumerate(self.query_ids)}
        self.qv, self.docs = np.load(args.cache / "queries.npy"), np.load(args.cache / "docs.npy")
        self.bm25 = Bm25Scorer(self.embedder, self.texts)
        self.sparse = self.lexical(self.bm25)

    def lexical(self, scorer: "Bm25Scorer", rewritten: dict[str, str] | None = None) -> np.ndarray:
        return np.stack([scorer.scores((rewritten or self.queries)[q]) for q in self.query_ids])


def windows_of(corpus, embedder: Embedder, tokens: int, overlap: bool) -> tuple[list[str], np.ndarray]:
    """The product's own windowing (ingest.writer.abstract_reading) applied to BEIR rows, each window written out as
    a text of its own (the title, then its sentences) and embedded alone, as the product did before it pooled
    windows from their abstract's pass."""
    texts, owners = [], []
    for j, row in enumerate(corpus):
        paper = Paper(id=row["_id"], title=row.get("title") or "", abstract=row.get("text") or "")
        reading = abstract_reading(paper, embedder.pieces, Windowing(tokens, overlap))
        head, sentences = _head(row), split_sentences(paper.abstract)
        for a, b in reading.windows:
            texts.append(" ".join([head, *sentences[a:b]]))
            owners.append(j)
    return texts, np.array(owners, dtype=np.int64)


def paper_scores(queries: np.ndarray, docs: np.ndarray, windows: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Each paper's dense score for each query, as the product ranks papers: its whole-abstract point or its best
    window (`owners[i]` is window i's paper), whichever is higher."""
    scores = queries @ docs.T
    order = np.argsort(owners, kind="stable")
    bounds = np.searchsorted(owners[order], np.arange(len(docs) + 1))
    has = bounds[1:] > bounds[:-1]
    best = np.maximum.reduceat((queries @ windows.T)[:, order], bounds[:-1][has], axis=1)
    scores[:, has] = np.maximum(scores[:, has], best)
    return scores


class Bm25Scorer:
    def __init__(self, embedder: Embedder, texts: list[str]) -> None:
        self.postings: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for j, vector in enumerate(embedder.sparse(texts)):
            for term, value in zip(vector.indices, vector.values, strict=True):
                self.postings[term].append((j, value))
        n = len(texts)
        self.idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}
        self.n = n
        self.embedder = embedder

    def scores(self, query: str) -> np.ndarray:
        _, sparse_model = self.embedder._load()
        terms = next(iter(sparse_model.query_embed(query))).indices.tolist()
        out = np.zeros(self.n, dtype=np.float32)
        for term in terms:
            for j, value in self.postings.get(term, ()):
                out[j] += self.idf[term] * value
        return out


def top(scores: np.ndarray, k: int) -> dict[int, float]:
    idx = np.argpartition(-scores, k)[:k]
    return {int(j): float(scores[j]) for j in idx}


def ranked(fused: dict[int, float], doc_ids: list[str]) -> list[str]:
    return [doc_ids[j] for j, _ in sorted(fused.items(), key=lambda x: (-x[1], doc_ids[x[0]]))[:100]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("beir_dir", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/scifact-variants"))
    parser.add_argument("--models", type=Path, default=ROOT / "data" / "local" / "models")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    corpus, queries, qrels = read_beir(args.beir_dir)
    doc_ids = [row["_id"] for row in corpus]
    embedder = Embedder(args.models)
    texts = [f"{_head(r)} {r.get('text') or ''}".strip() for r in corpus]  # as ingest.writer.index_text
    query_ids = sorted(set(qrels["train"]) | set(qrels["test"]))
    qv = _cached(args.cache / "queries.npy", lambda: embedder.dense([queries[q] for q in query_ids]))
    qpos = {q: i for i, q in enumerate(query_ids)}
    docs = _cached(args.cache / "docs.npy", lambda: embedder.dense(texts))
    dense_full = qv @ docs.T
    bm25 = Bm25Scorer(embedder, texts)
    sparse = np.stack([bm25.scores(queries[q]) for q in query_ids])
    print(
        f"BM25 avg_len {BM25_AVG_LEN}; {len(corpus)} documents; train {len(qrels['train'])}, test {len(qrels['test'])}"
    )

    def score(dense: np.ndarray, params: FusionParams | None, split: str) -> float:
        run = {}
        for q in qrels[split]:
            i = qpos[q]
            if params is None:  # BM25 alone
                run[q] = ranked(top(sparse[i], 100), doc_ids)
            elif params.dense_weight == 1.0:
                run[q] = ranked(top(dense[i], 100), doc_ids)
            else:
                run[q] = ranked(fuse(top(dense[i], 100), top(sparse[i], 100), params), doc_ids)
        return evaluate(run, qrels[split]).ndcg10

    def report(name: str, dense: np.ndarray) -> None:
        alone = FusionParams(dense_weight=1.0)
        print(f"| dense alone, {name} | {score(dense, alone, 'train'):.4f} | {score(dense, alone, 'test'):.4f} |")
        fusions = [FusionParams(method="rrf", dense_weight=0.5)]
        fusions += [FusionParams(method=m, dense_weight=w) for m in ("minmax", "max") for w in (0.4, 0.5, 0.6, 0.7)]
        for params in fusions:
            label = f"hybrid, {name}, {params.method} w={params.dense_weight}"
            print(f"| {label} | {score(dense, params, 'train'):.4f} | {score(dense, params, 'test'):.4f} |", flush=True)

    print("\n| variant | train nDCG@10 | test nDCG@10 |\n|---|---|---|")
    print(f"| BM25 alone | {score(dense_full, None, 'train'):.4f} | {score(dense_full, None, 'test'):.4f} |")
    report("whole abstract", dense_full)
    for tokens, overlap in WINDOWS:  # each windowing's rows as soon as its windows are embedded
        name = f"windows {tokens}{'o' if overlap else 'n'}"
        win_texts, owners = windows_of(corpus, embedder, tokens, overlap)
        vectors = _cached(args.cache / f"{name.replace(' ', '_')}.npy", lambda t=win_texts: embedder.dense(t))
        scores = dense_full.copy()
        window_scores = qv @ vectors.T
        for j in np.unique(owners):
            scores[:, j] = np.maximum(scores[:, j], window_scores[:, owners == j].max(axis=1))
        report(f"{name} ({len(win_texts)} windows)", scores)


if __name__ == "__main__":
    main()
