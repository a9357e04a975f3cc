"""Two things learned from the corpus alone (no claims, no judgements), tried on the query side on SciFact train:

    .venv/bin/python -m bench.retrieval_query_side /path/to/scifact_beir --models DIR [--cache /tmp/scifact-variants]

1. Acronym expansion. Short forms and their long forms are mined from the corpus's own titles and abstracts
   ("... aldehyde dehydrogenase 1 (ALDH1) ...", the Schwartz-Hearst rule: the short form's letters found in
   order in the words before the parenthesis, the first at a word's start). A query's short forms get their
   long form added (and, in the second variant, its long forms their short forms too), for BM25, for the dense
   query, or both. arXiv papers define their acronyms the same way ("large language models (LLMs)").
2. A query-side linear adapter: a 384 x 384 map W (from the identity) that sends each document's title
   embedding towards its own abstract's embedding and away from the others' (in-batch contrastive loss,
   temperature 0.05, Adam, full batch), then q' = normalise((1 - alpha) q + alpha normalise(W q)). Learned
   once on every document, and once on a random half with only the claims whose judged documents all lie in
   the other half scored (so a gain could not come from having seen those documents).
Windows of 80 tokens without overlap and the product's fixed mix (`FusionParams()`, each side over its best);
train nDCG@10 only. Reads the vectors `bench/retrieval_variants.py` cached and embeds the titles and the bare
abstracts once (about 3 minutes).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import numpy as np

from bench.retrieval_variants import (
    Experiment,
    _cached,
    experiment_arguments,
    paper_scores,
    ranked,
    top,
    windows_of,
)
from retrieval.search.evaluation import evaluate
from retrieval.vectors.index import FusionParams, fuse

_PARENTHESIS = re.compile(r"\(([^()\s;,]{2,10})\)")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-/]*[A-Za-z0-9]|[A-Za-z0-9]")


def acronyms(text: str) -> list[tuple[str, str]]:
    """(short form, long form) pairs defined in `text`, by the Schwartz-Hearst rule."""
    found = []
    for match in _PARENTHESIS.finditer(text):
        short = match.group(1)
        if not re.search(r"[A-Z]", short) or not short[0].isalnum():
            continue
        words = text[: match.start()].split()[-min(len(short) + 5, 2 * len(short)) :]
        candidate = " ".join(words)
        s, i, start = len(short) - 1, len(candidate) - 1, None
        while s >= 0:
            letter = short[s].lower()
            if not letter.isalnum():
                s -= 1
                continue
            while i >= 0 and (candidate[i].lower() != letter or (s == 0 and i > 0 and candidate[i - 1].isalnum())):
                i -= 1
            if i < 0:
                break
            start = i if s == 0 else start
            s, i = s - 1, i - 1
        if start is None:
            continue
        long = candidate[start:].strip(" ,;:")
        if len(long) > len(short) and 2 <= len(long.split()) <= len(short) + 5:
            found.append((short, long.lower()))
    return found


class QuerySide:
    """The product's mix over the cached vectors, for rewritten or moved queries."""

    def __init__(self, args) -> None:
        self.ex = Experiment(args)
        self.train = list(self.ex.qrels["train"])
        self.windows = np.load(args.cache / "windows_80n.npy")
        _, self.owners = windows_of(self.ex.corpus, self.ex.embedder, 80, False)
        self.base = self.dense_scores(self.ex.qv)

    def dense_scores(self, vectors: np.ndarray) -> np.ndarray:
        return paper_scores(vectors, self.ex.docs, self.windows, self.owners)

    def ndcg(self, dense: np.ndarray, lexical: np.ndarray, subset: list[str] | None = None) -> float:
        ex, run = self.ex, {}
        for q in subset or self.train:
            fused = fuse(top(dense[ex.qpos[q]], 100), top(lexical[ex.qpos[q]], 100), FusionParams())  # the product's
            run[q] = ranked(fused, ex.doc_ids)
        return evaluate(run, {q: ex.qrels["train"][q] for q in run}).ndcg10


def _acronym_expansion(side: QuerySide) -> None:
    """1. Acronyms mined from the corpus."""
    ex = side.ex
    defined: dict[str, Counter] = defaultdict(Counter)
    for text in ex.texts:
        for short, long in acronyms(text):
            defined[short][long] += 1
    expansion = {short: forms.most_common(1)[0][0] for short, forms in defined.items()}
    shorts_of: dict[str, set[str]] = defaultdict(set)
    for short, long in expansion.items():
        shorts_of[long].add(short)

    def expanded(query: str, both_ways: bool) -> str:
        extra = [expansion[t] for t in _TOKEN.findall(query) if t in expansion and expansion[t] not in query.lower()]
        if both_ways:
            extra += [
                s for long, shorts in shorts_of.items() if long in query.lower() for s in shorts if s not in query
            ]
        return " ".join([query, *extra])

    print(f"{len(expansion)} short forms defined in the corpus", flush=True)
    for both_ways in (False, True):
        rewritten = {q: expanded(ex.queries[q], both_ways) for q in ex.query_ids}
        touched = sum(rewritten[q] != ex.queries[q] for q in side.train)
        lexical = ex.lexical(ex.bm25, rewritten)
        dense = side.dense_scores(ex.embedder.dense([rewritten[q] for q in ex.query_ids]))
        label = "short -> long and long -> short" if both_ways else "short -> long"
        print(
            f"acronyms, {label} ({touched} of {len(side.train)} train claims rewritten): BM25 "
            f"{side.ndcg(side.base, lexical):.4f}, dense {side.ndcg(dense, ex.sparse):.4f}, both "
            f"{side.ndcg(dense, lexical):.4f}",
            flush=True,
        )


def _query_adapter(side: QuerySide, cache) -> None:
    """2. A query adapter learned from title -> abstract pairs."""
    ex, corpus = side.ex, side.ex.corpus
    where = {d: j for j, d in enumerate(ex.doc_ids)}
    titles = _cached(cache / "titles.npy", lambda: ex.embedder.dense([r.get("title") or "" for r in corpus]))
    bare = _cached(cache / "abstracts.npy", lambda: ex.embedder.dense([r.get("text") or "" for r in corpus]))
    half = np.random.default_rng(0).permutation(len(corpus))[: len(corpus) // 2]
    in_half = np.zeros(len(corpus), dtype=bool)
    in_half[half] = True
    unseen = [q for q in side.train if not any(in_half[where[d]] for d in ex.qrels["train"][q])]
    print(f"claims whose judged documents all lie outside the random half: {len(unseen)}; baseline on them "
          f"{side.ndcg(side.base, ex.sparse, unseen):.4f}", flush=True)  # fmt: skip
    for steps in (100, 300):
        for name, rows, subset in (("all documents", np.arange(len(corpus)), None), ("half", half, unseen)):
            adapter = _adapter(titles[rows], bare[rows], steps)
            for alpha in (0.5, 1.0):
                moved = (1 - alpha) * ex.qv + alpha * _unit(ex.qv @ adapter.T)
                score = side.ndcg(side.dense_scores(_unit(moved)), ex.sparse, subset)
                print(f"adapter on {name}, {steps} steps, alpha {alpha}: train {score:.4f}", flush=True)


def main() -> None:
    args = experiment_arguments(__doc__)
    side = QuerySide(args)
    print(f"baseline (the product's mix): train {side.ndcg(side.base, side.ex.sparse):.4f}", flush=True)
    _acronym_expansion(side)
    _query_adapter(side, args.cache)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _adapter(anchors: np.ndarray, targets: np.ndarray, steps: int, tau: float = 0.05, lr: float = 3e-3) -> np.ndarray:
    """W minimising the in-batch contrastive loss of normalise(W a_i) against t_i, from the identity (Adam)."""
    n, dim = anchors.shape
    w = np.eye(dim)
    m, v = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):
        u = anchors @ w.T
        length = np.linalg.norm(u, axis=1, keepdims=True)
        unit = u / length
        logits = unit @ targets.T / tau
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(n), np.arange(n)] -= 1
        d_unit = p @ targets / (tau * n)
        d_u = (d_unit - unit * (d_unit * unit).sum(axis=1, keepdims=True)) / length
        grad = d_u.T @ anchors + (w - np.eye(dim)) / dim
        m, v = 0.9 * m + 0.1 * grad, 0.999 * v + 0.001 * grad**2
        w -= lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w.astype(np.float32)


if __name__ == "__main__":
    main()
