"""Two more fusion shapes on SciFact train, from the vectors `bench/retrieval_variants.py` cached:

    .venv/bin/python -m bench.retrieval_fusion_shape /path/to/scifact_beir --models DIR [--cache /tmp/scifact-variants]

1. sharpened scores: w * (d / d_max)^p + (1 - w) * (s / s_max)^q;
2. a paper's dense score = its best window + lambda * its second-best window;
3. a third signal: BM25 over titles alone, weight t;
4. windows of 40 tokens (about one sentence after the title) instead of 80, or both averaged;
5. a third signal: BM25 over the dense model's own WordPiece tokens (unigrams, or with bigrams), weight t;
6. neighbour smoothing: each candidate gains beta x the mean of its cosine^p to the fused top k times
   their fused scores (documents like the best ones rise).
Windows of 80 tokens without overlap (the product's); train nDCG@10 only (the baseline also on test).
The 40-token windows are embedded once (about 7 minutes) and cached beside the others.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retrieval_variants import (  # noqa: E402
    Bm25Scorer,
    Experiment,
    _cached,
    experiment_arguments,
    ranked,
    top,
    windows_of,
)

from retrieval.search.evaluation import evaluate  # noqa: E402
from retrieval.vectors.embeddings import Embedder  # noqa: E402


def _best_windows(dense_full: np.ndarray, scores: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query and paper: the best of its abstract and its windows, and its second-best window."""
    best, second = dense_full.copy(), np.full_like(dense_full, -1.0)
    order = np.argsort(owners, kind="stable")
    bounds = np.searchsorted(owners[order], np.arange(dense_full.shape[1] + 1))
    for j in range(dense_full.shape[1]):
        columns = order[bounds[j] : bounds[j + 1]]
        if len(columns):
            sorted_scores = np.sort(scores[:, columns], axis=1)
            best[:, j] = np.maximum(best[:, j], sorted_scores[:, -1])
            second[:, j] = sorted_scores[:, -2] if sorted_scores.shape[1] > 1 else sorted_scores[:, -1]
    return best, second


class Shapes:
    """nDCG@10 of one fusion shape (weights, exponents, a third signal, neighbour smoothing) on a split."""

    def __init__(self, ex: Experiment) -> None:
        self.ex = ex
        titles = Bm25Scorer(ex.embedder, [r.get("title") or "" for r in ex.corpus])
        self.title_sparse = ex.lexical(titles)

    def ndcg(self, split: str, dense: np.ndarray, w: float, p: float = 1.0, q_exp: float = 1.0, t: float = 0.0,
             third: np.ndarray | None = None, smooth: tuple[int, float, float] | None = None) -> float:  # fmt: skip
        ex, third = self.ex, self.title_sparse if third is None else third
        run = {}
        for q in ex.qrels[split]:
            i = ex.qpos[q]
            d, s, ti = top(dense[i], 100), top(ex.sparse[i], 100), top(third[i], 100)
            d_max, s_max, t_max = max(d.values()), max(s.values()) or 1.0, max(ti.values()) or 1.0
            fused = {
                k: w * (max(d.get(k, 0.0), 0.0) / d_max) ** p
                + (1 - w) * (s.get(k, 0.0) / s_max) ** q_exp
                + t * ti.get(k, 0.0) / t_max
                for k in d.keys() | s.keys()
            }
            run[q] = ranked(self._smoothed(fused, smooth) if smooth else fused, ex.doc_ids)
        return evaluate(run, ex.qrels[split]).ndcg10

    def _smoothed(self, fused: dict[int, float], smooth: tuple[int, float, float]) -> dict[int, float]:
        k_top, beta, power = smooth
        keys = list(fused)
        leaders = sorted(keys, key=lambda j: -fused[j])[:k_top]
        sim = np.maximum(self.ex.docs[keys] @ self.ex.docs[leaders].T, 0.0) ** power
        sim[np.array(keys)[:, None] == np.array(leaders)[None, :]] = 0.0  # not itself
        lift = sim @ np.array([fused[j] for j in leaders]) / k_top
        return {j: fused[j] + beta * float(x) for j, x in zip(keys, lift, strict=True)}


def main() -> None:
    args = experiment_arguments(__doc__)
    ex = Experiment(args)
    dense_full = ex.qv @ ex.docs.T
    _, owners = windows_of(ex.corpus, ex.embedder, 80, False)
    best, second = _best_windows(dense_full, ex.qv @ np.load(args.cache / "windows_80n.npy").T, owners)
    shapes = Shapes(ex)
    ndcg = shapes.ndcg
    print(f"baseline (w 0.7): train {ndcg('train', best, 0.7):.4f}, test {ndcg('test', best, 0.7):.4f}")
    for w, p, q_exp in itertools.product((0.6, 0.7, 0.8), (1, 2, 3, 4), (0.5, 1.0)):
        print(f"sharpened w {w} p {p} q {q_exp}: train {ndcg('train', best, w, p, q_exp):.4f}", flush=True)
    for lam in (0.1, 0.2, 0.3):
        print(f"second window lambda {lam}: train {ndcg('train', best + lam * second, 0.7):.4f}", flush=True)
    for t, w in itertools.product((0.05, 0.1, 0.15, 0.2), (0.65, 0.7, 0.75)):
        print(f"title BM25 t {t} w {w}: train {ndcg('train', best, w, t=t):.4f}", flush=True)

    texts_40, owners_40 = windows_of(ex.corpus, ex.embedder, 40, False)
    scores_40 = ex.qv @ _cached(args.cache / "windows_40n.npy", lambda: ex.embedder.dense(texts_40)).T
    best_40, _ = _best_windows(dense_full, scores_40, owners_40)
    for mix, w in itertools.product((1.0, 0.5), (0.6, 0.7)):
        label = "40-token windows" if mix == 1.0 else "40- and 80-token windows averaged"
        print(f"{label} ({len(texts_40)}) w {w}: train {ndcg('train', mix * best_40 + (1 - mix) * best, w):.4f}")

    for bigrams in (False, True):
        wordpiece = np.stack([_wordpiece_bm25(ex.embedder, ex.texts, ex.queries[q], bigrams) for q in ex.query_ids])
        for t, w in itertools.product((0.1, 0.2, 0.3), (0.6, 0.7)):
            label = "WordPiece BM25" + (" + bigrams" if bigrams else "")
            print(f"{label} t {t} w {w}: train {ndcg('train', best, w, t=t, third=wordpiece):.4f}", flush=True)

    for k_top, beta, power in itertools.product((3, 5, 10), (0.05, 0.1, 0.2), (1, 3)):
        score = ndcg("train", best, 0.7, smooth=(k_top, beta, power))
        print(f"neighbour smoothing k {k_top} beta {beta} p {power}: train {score:.4f}", flush=True)


_WORDPIECE: dict = {}


def _wordpiece_bm25(embedder: Embedder, texts: list[str], query: str, bigrams: bool) -> np.ndarray:
    """Okapi BM25 (k1 1.2, b 0.75, our stop words) over the MiniLM tokenizer's word pieces."""
    import math
    from collections import Counter, defaultdict

    from tokenizers import Tokenizer

    from retrieval.vectors.embeddings import STOPWORDS

    if bigrams not in _WORDPIECE:
        tokenizer = Tokenizer.from_file(str(embedder.models_dir / "all-MiniLM-L6-v2-onnx" / "tokenizer.json"))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        stop = set(STOPWORDS.read_text().split())

        def pieces(text: str) -> list[str]:
            words = [w for w in tokenizer.encode(text, add_special_tokens=False).tokens if w not in stop]
            words = [w for w in words if any(ch.isalnum() for ch in w)]
            return words + ([f"{a}_{b}" for a, b in zip(words, words[1:], strict=False)] if bigrams else [])

        counts = [Counter(pieces(t)) for t in texts]
        average = float(np.mean([sum(c.values()) for c in counts]))
        postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for j, c in enumerate(counts):
            length = sum(c.values())
            for term, f in c.items():
                postings[term].append((j, f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / average))))
        n = len(texts)
        idf = {term: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for term, p in postings.items()}
        _WORDPIECE[bigrams] = (pieces, postings, idf)
    pieces, postings, idf = _WORDPIECE[bigrams]
    out = np.zeros(len(texts), dtype=np.float32)
    for term in set(pieces(query)):
        for j, value in postings.get(term, ()):
            out[j] += idf[term] * value
    return out


if __name__ == "__main__":
    main()
