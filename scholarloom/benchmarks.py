"""Retrieval quality on BEIR SciFact, through the product's own ingest, index and search code.

The corpus (5,183 abstracts) is loaded as papers into a fresh catalog, embedded and indexed by
`ingest.pipeline.index_papers` exactly as arXiv papers are, and every query goes through
`Index.papers`: BM25 alone, dense alone and the hybrid, in one run. The data set is read from where the
user keeps it (it is licensed for non-commercial use and is not shipped).
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ingest.pipeline import NullProgress, Windowing, index_papers, load_records
from ingest.report import Summary
from retrieval.catalog import Catalog
from retrieval.embeddings import Embedder
from retrieval.fusion import FusionParams
from retrieval.index import Index
from retrieval.records import PaperRecord
from retrieval.store import DENSE, SPARSE

MODES = {"BM25": (SPARSE,), "dense": (DENSE,), "hybrid": (DENSE, SPARSE)}


@dataclass(frozen=True)
class Scores:
    ndcg10: float
    recall100: float
    mrr10: float


def read_beir(folder: Path) -> tuple[list[dict], dict[str, str], dict[str, dict[str, dict[str, int]]]]:
    """Corpus rows, queries by id, and qrels by split (only the splits present)."""
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8") if line.strip()]
    queries = {}
    for line in (folder / "queries.jsonl").open(encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            queries[row["_id"]] = row["text"]
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for path in sorted((folder / "qrels").glob("*.tsv")):
        split = qrels.setdefault(path.stem, defaultdict(dict))
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            query_id, doc_id, score = line.split("\t")
            split[query_id][doc_id] = int(score)
    return corpus, queries, qrels


def evaluate(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> Scores:
    """nDCG@10 (binary gains, as BEIR's SciFact qrels are), Recall@100 and MRR@10, averaged over queries."""
    ndcg = recall = mrr = 0.0
    for query_id, judged in qrels.items():
        relevant = {doc for doc, grade in judged.items() if grade > 0}
        ranked = run.get(query_id, [])
        dcg = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
        ndcg += dcg / ideal if ideal else 0.0
        recall += len(relevant & set(ranked[:100])) / len(relevant) if relevant else 0.0
        mrr += next((1 / (i + 1) for i, doc in enumerate(ranked[:10]) if doc in relevant), 0.0)
    n = max(1, len(qrels))
    return Scores(ndcg / n, recall / n, mrr / n)


def build_index(
    corpus: list[dict], data_dir: Path, embedder: Embedder, progress=None, windowing: Windowing = Windowing()
) -> tuple[Catalog, Index, float]:
    """Load the corpus as papers and index it with the product's pipeline (skipped when already done)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    catalog = Catalog(f"sqlite:///{data_dir / 'catalog.db'}")
    index = Index.open("scifact", path=data_dir / "index")
    records = [
        PaperRecord(
            id=f"beir:{row['_id']}",
            title=row.get("title") or "(untitled)",
            abstract=row.get("text") or "",
            authors=[],
            source="beir",
        )
        for row in corpus
    ]
    summary = Summary()
    started = time.perf_counter()
    load_records(catalog, "beir", records, summary, progress)
    index_papers(catalog, index, embedder, summary, progress, windowing=windowing)
    return catalog, index, time.perf_counter() - started


def run_queries(
    index: Index, embedder: Embedder, queries: dict[str, str], query_ids: list[str], params: FusionParams
) -> dict[str, dict[str, list[str]]]:
    """Top 100 per query for each mode, with one query embedding shared by the three."""
    index.params = params
    runs: dict[str, dict[str, list[str]]] = {mode: {} for mode in MODES}
    for query_id in query_ids:
        embedded = embedder.query(queries[query_id])
        for mode, sides in MODES.items():
            scored = index.papers(embedded, limit=100, sides=sides)
            runs[mode][query_id] = [s.paper_id.removeprefix("beir:") for s in scored]
    return runs


def retrieval_benchmark(
    folder: Path,
    data_dir: Path,
    models_dir: Path,
    splits: list[str],
    params: FusionParams,
    progress=None,
    windowing: Windowing = Windowing(),
) -> dict[str, dict[str, Scores]]:
    corpus, queries, qrels = read_beir(folder)
    missing = [s for s in splits if s not in qrels]
    if missing:
        raise ValueError(f"no qrels/{missing[0]}.tsv in {folder}; present: {', '.join(sorted(qrels))}")
    embedder = Embedder(models_dir)
    catalog, index, _ = build_index(corpus, data_dir, embedder, progress or NullProgress(), windowing)
    try:
        results = {}
        for split in splits:
            runs = run_queries(index, embedder, queries, sorted(qrels[split]), params)
            results[split] = {mode: evaluate(run, qrels[split]) for mode, run in runs.items()}
        return results
    finally:
        index.close()
        catalog.engine.dispose()
