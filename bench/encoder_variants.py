"""The encoder's variants on SciFact: float32 or int8 weights, each abstract's windows embedded as texts of their own
or pooled from the abstract's own pass (three poolings), scored as `bench/retrieval_variants.py` scores (numpy,
exact cosine, BM25 with Qdrant's IDF, the product's fusion), with each variant's encoder work.

    .venv/bin/python -m bench.encoder_variants /path/to/scifact_beir --models data/local/models [--cache DIR]

Every vector is cached in --cache (one file per precision and variant), so a rerun only scores. The chosen variant
is then measured once through the harness (`scholarloom bench retrieval --precision ...`); BENCHMARKS.md, "The
encoder", has both.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval_variants import Bm25Scorer, _cached, _head, ranked, top, windows_of  # noqa: E402
from ingest.beir import read_beir  # noqa: E402
from ingest.writer import Windowing, abstract_reading  # noqa: E402
from retrieval.scholarly.models import Paper  # noqa: E402
from retrieval.search.evaluation import evaluate  # noqa: E402
from retrieval.vectors.embeddings import Embedder  # noqa: E402
from retrieval.vectors.encoder import BODY, _passes, normalised  # noqa: E402
from retrieval.vectors.index import FusionParams, fuse  # noqa: E402

# Which of a window's states its vector is the mean of, given the positions `_passes` names ([CLS], the title's
# pieces, the window's pieces, [SEP]) and how many of them are the title's.
POOLINGS = {
    "pooled (CLS, title, window, SEP)": lambda positions, head: positions,
    "pooled (title, window)": lambda positions, head: positions[1:-1],
    "pooled (window only)": lambda positions, head: positions[1 + head : -1],
}


def pooled_windows(embedder: Embedder, readings, batch: int = 8) -> tuple[np.ndarray, dict[str, np.ndarray], float]:
    """Each reading's whole vector and, per pooling, its windows' vectors (in reading order), from one set of passes;
    and the seconds the passes took."""
    encoder, _ = embedder._load()
    plans = [_passes(r) for r in readings]
    started = time.perf_counter()
    states = iter(encoder.states([seq for passes, _ in plans for seq in passes], batch))
    seconds = time.perf_counter() - started
    wholes, windows = [], {name: [] for name in POOLINGS}
    for reading, (passes, spots) in zip(readings, plans, strict=True):
        read = [next(states) for _ in passes]
        wholes.append(normalised(read[0].mean(axis=0)))
        head = min(len(reading.head), BODY)
        for name, pick in POOLINGS.items():
            windows[name] += [normalised(read[k][pick(positions, head)].mean(axis=0)) for k, positions in spots]
    return np.stack(wholes), {name: np.stack(v) for name, v in windows.items()}, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("beir_dir", type=Path)
    parser.add_argument("--models", type=Path, default=ROOT / "data" / "local" / "models")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/scifact-encoder-variants"))
    parser.add_argument("--precision", action="append", choices=["float32", "int8"])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    corpus, queries, qrels = read_beir(args.beir_dir)
    doc_ids = [row["_id"] for row in corpus]
    query_ids = sorted(set(qrels["train"]) | set(qrels["test"]))
    qpos = {q: i for i, q in enumerate(query_ids)}
    texts = [f"{_head(r)} {r.get('text') or ''}".strip() for r in corpus]
    papers = [Paper(id=r["_id"], title=r.get("title") or "", abstract=r.get("text") or "") for r in corpus]
    base = Embedder(args.models, args.threads)
    bm25 = Bm25Scorer(base, texts)
    sparse = np.stack([bm25.scores(queries[q]) for q in query_ids])
    readings = [abstract_reading(p, base.pieces, Windowing()) for p in papers]
    owners = np.array([j for j, r in enumerate(readings) for _ in r.windows], dtype=np.int64)
    window_text_list, window_owners = windows_of(corpus, base, 80, False)
    assert np.array_equal(owners, window_owners)
    print(f"{len(corpus)} documents, {len(owners)} windows; train {len(qrels['train'])}, test {len(qrels['test'])}")

    def score(dense: np.ndarray | None, weight: float, split: str) -> float:
        run = {}
        for q in qrels[split]:
            i = qpos[q]
            if dense is None:
                run[q] = ranked(top(sparse[i], 100), doc_ids)
            elif weight == 1.0:
                run[q] = ranked(top(dense[i], 100), doc_ids)
            else:
                params = FusionParams(method="max", dense_weight=weight)
                run[q] = ranked(fuse(top(dense[i], 100), top(sparse[i], 100), params), doc_ids)
        return evaluate(run, qrels[split]).ndcg10

    bounds = np.searchsorted(owners, np.arange(len(corpus) + 1))  # windows are in their papers' order
    has = bounds[1:] > bounds[:-1]

    def papers_scores(qv: np.ndarray, abstract: np.ndarray, windows: np.ndarray | None, both: bool) -> np.ndarray:
        """Each paper's dense score: its best window, or its abstract's point, or the higher of the two (`both`)."""
        scores = qv @ abstract.T
        if windows is not None:
            best = np.maximum.reduceat(qv @ windows.T, bounds[:-1][has], axis=1)
            scores[:, has] = np.maximum(scores[:, has], best) if both else best
        return scores

    def centroids(whole: np.ndarray, windows: np.ndarray) -> np.ndarray:
        """The abstract's vector replaced by its windows' mean where it has windows."""
        out = whole.copy()
        sums = np.add.reduceat(windows, bounds[:-1][has], axis=0)
        out[has] = sums / np.linalg.norm(sums, axis=1, keepdims=True)
        return out

    print("\n| precision | variant | encoder s | dense train / test | hybrid w=0.5 | w=0.6 (product) | w=0.7 |")
    print("|---|---|---|---|---|---|---|")
    print(f"| - | BM25 alone | - | - | {score(None, 0, 'train'):.4f} / {score(None, 0, 'test'):.4f} | | |")
    for precision in args.precision or ["float32", "int8"]:
        embedder = Embedder(args.models, args.threads, precision=precision)
        questions = [queries[q] for q in query_ids]
        qv = _cached(args.cache / f"{precision}-queries.npy", lambda e=embedder: e.dense(questions))
        timing = args.cache / f"{precision}-seconds.json"
        seconds = json.loads(timing.read_text()) if timing.exists() else {}
        if not (args.cache / f"{precision}-whole.npy").exists():
            whole, pooled, took = pooled_windows(embedder, readings)
            np.save(args.cache / f"{precision}-whole.npy", whole)
            for k, (name, vectors) in enumerate(pooled.items()):
                np.save(args.cache / f"{precision}-pooled{k}.npy", vectors)
            seconds["pooled"] = took
        whole = np.load(args.cache / f"{precision}-whole.npy")
        pooled = {name: np.load(args.cache / f"{precision}-pooled{k}.npy") for k, name in enumerate(POOLINGS)}
        if not (args.cache / f"{precision}-separate.npy").exists():
            started = time.perf_counter()
            np.save(args.cache / f"{precision}-separate.npy", embedder.dense(window_text_list))
            seconds["separate windows"] = time.perf_counter() - started
        timing.write_text(json.dumps(seconds))
        separate = np.load(args.cache / f"{precision}-separate.npy")
        apart = seconds.get("separate windows", float("nan"))
        variants = {
            "whole abstract only": (whole, None, True, float("nan")),
            "windows as texts of their own (the product's)": (whole, separate, True, seconds.get("pooled", 0) + apart),
            "windows as texts of their own, no whole-abstract pass (papers with windows)": (whole, separate, False,
                                                                                             apart),
            "windows as texts of their own, their mean as the abstract's vector": (centroids(whole, separate),
                                                                                    separate, True, apart),
        }
        variants |= {name: (whole, vectors, True, seconds.get("pooled", 0)) for name, vectors in pooled.items()}
        for name, (abstract, windows, both, took) in variants.items():
            dense = papers_scores(qv, abstract, windows, both)
            cells = [f"{score(dense, 1.0, 'train'):.4f} / {score(dense, 1.0, 'test'):.4f}"]
            cells += [f"{score(dense, w, 'train'):.4f} / {score(dense, w, 'test'):.4f}" for w in (0.5, 0.6, 0.7)]
            print(f"| {precision} | {name} | {took:.0f} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
