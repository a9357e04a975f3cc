"""Retrieval quality measures: nDCG@10, Recall@100 and MRR@10 of ranked runs against graded judgements, and the
runs themselves, through `Index.papers` (BM25 alone, dense alone and the hybrid)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.index import FusionParams, Index
from retrieval.vectors.store import DENSE, SPARSE

MODES = {"BM25": (SPARSE,), "dense": (DENSE,), "hybrid": (DENSE, SPARSE)}


@dataclass(frozen=True)
class Scores:
    ndcg10: float
    recall100: float
    mrr10: float


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


def run_queries(
    index: Index, embedder: Embedder, queries: dict[str, str], query_ids: list[str], params: FusionParams
) -> dict[str, dict[str, list[str]]]:
    """Top 100 per query for each mode, with one query embedding shared by the three (BEIR ids: the `beir:`
    prefix of their paper ids dropped)."""
    index.params = params
    runs: dict[str, dict[str, list[str]]] = {mode: {} for mode in MODES}
    for query_id in query_ids:
        embedded = embedder.query(queries[query_id])
        for mode, sides in MODES.items():
            scored = index.papers(embedded, limit=100, sides=sides)
            runs[mode][query_id] = [s.paper_id.removeprefix("beir:") for s in scored]
    return runs


@dataclass(frozen=True)
class JudgedCell:
    paper: str
    aspect: str
    expected: tuple[str, ...]  # any of these sentences (a distinctive part of it) is the right cell
    picked: str | None

    @property
    def right(self) -> bool:
        said = " ".join((self.picked or "").split()).lower()
        return any(" ".join(e.split()).lower() in said for e in self.expected)


def judge_cells(archive, path) -> list[JudgedCell]:
    """The extractive comparison cell of each judged (paper, aspect) of a JSON-lines file, against its expected
    sentences (`{"paper": id, "aspect": text, "expected": [part of a sentence, ...]}`)."""
    judged = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        cell = archive.compare([item["paper"]], [item["aspect"]]).cell(item["paper"], item["aspect"])
        judged.append(JudgedCell(item["paper"], item["aspect"], tuple(item["expected"]), cell.text if cell else None))
    return judged
