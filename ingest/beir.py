"""Retrieval quality on a BEIR data set (e.g. SciFact), through the product's own ingest, index and search code.

The corpus is loaded as papers into a fresh catalog, embedded and indexed by `ingest.indexing.index_papers`
exactly as arXiv papers are, and every query goes through `Index.papers` (`retrieval.search.evaluation`). The data set
is read from where the user keeps it (SciFact is licensed for non-commercial use and is not shipped).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path

from ingest.indexing import index_papers
from ingest.pipeline import NullProgress, load_records
from ingest.report import Summary
from ingest.writer import Windowing, Writer
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.records import PaperRecord
from retrieval.search.evaluation import Scores, evaluate, run_queries
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.encoder import DEFAULT_PRECISION
from retrieval.vectors.index import FusionParams, Index


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
    index_papers(Writer(catalog, index, embedder), summary, progress, windowing=windowing)
    return catalog, index, time.perf_counter() - started


def retrieval_benchmark(
    folder: Path,
    data_dir: Path,
    models_dir: Path,
    splits: list[str],
    params: FusionParams,
    progress=None,
    windowing: Windowing = Windowing(),
    threads: int | None = None,
    precision: str = DEFAULT_PRECISION,
) -> dict[str, dict[str, Scores]]:
    corpus, queries, qrels = read_beir(folder)
    missing = [s for s in splits if s not in qrels]
    if missing:
        raise ValueError(f"no qrels/{missing[0]}.tsv in {folder}; present: {', '.join(sorted(qrels))}")
    embedder = Embedder(models_dir, threads, precision=precision)  # SCHOLARLOOM_EMBED_THREADS, as in the product
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
