"""The retrieval benchmark harness: its metrics, and a small BEIR-format set run through the real path."""

import json
import math

import pytest

from ingest.beir import read_beir, retrieval_benchmark
from retrieval.search.evaluation import evaluate
from retrieval.vectors.index import FusionParams
from tests.conftest import ENCODER_THREADS, REPO


def test_metrics_on_a_known_ranking():
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"z": 1}}
    run = {"q1": ["x", "a", "y", "b"], "q2": ["z"]}
    scores = evaluate(run, qrels)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3)
    assert scores.ndcg10 == pytest.approx((dcg / ideal + 1.0) / 2)
    assert scores.recall100 == 1.0 and scores.mrr10 == pytest.approx((0.5 + 1.0) / 2)
    assert evaluate({}, qrels).ndcg10 == 0.0


def _tiny_beir(folder):
    """Forty real demo abstracts; each query is one sentence of an abstract, relevant to that abstract only."""
    rows = []
    for line in (REPO / "data/demo/arxiv_metadata/arxiv-metadata-oai-snapshot.head200.jsonl").open():
        row = json.loads(line)
        if len(row.get("abstract", "")) > 400:
            rows.append(row)
        if len(rows) == 40:
            break
    (folder / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": r["id"], "title": " ".join(r["title"].split()), "text": " ".join(r["abstract"].split())} for r in rows
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in corpus))
    queries = [{"_id": f"q{i}", "text": c["text"].split(". ")[1][:200]} for i, c in enumerate(corpus)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    lines = ["query-id\tcorpus-id\tscore"] + [f"q{i}\t{c['_id']}\t1" for i, c in enumerate(corpus)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")


def test_harness_runs_the_three_rows_through_the_product(tmp_path):
    _tiny_beir(tmp_path / "tiny")
    corpus, queries, qrels = read_beir(tmp_path / "tiny")
    assert len(corpus) == 40 and set(qrels) == {"test"}
    models = tmp_path / "models"  # built offline from the installed weights, as on a fresh machine
    work = tmp_path / "work"
    results = retrieval_benchmark(tmp_path / "tiny", work, models, ["test"], FusionParams(), threads=ENCODER_THREADS)
    rows = results["test"]
    assert set(rows) == {"BM25", "dense", "hybrid"}
    # A sentence taken from an abstract finds that abstract: all three rows are near perfect here.
    assert min(r.ndcg10 for r in rows.values()) > 0.85
    assert all(0 <= r.recall100 <= 1 and 0 <= r.mrr10 <= 1 for r in rows.values())
    with pytest.raises(ValueError, match="no qrels/train.tsv"):
        retrieval_benchmark(tmp_path / "tiny", work, models, ["train"], FusionParams())
