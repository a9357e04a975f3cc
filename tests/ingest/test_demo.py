"""Loading the demo corpus: everything arrives, a rerun changes nothing, bad records are skipped and reported."""

import json
import shutil

from ingest.demo import DEMO_DIR, load_demo
from retrieval.index import Filters


def test_demo_loads_every_source(demo_load):
    settings, summary = demo_load
    counts = settings.catalog().counts()
    assert counts["papers"] > 1700 and counts["institutions"] > 2500 and counts["citations"] > 10000
    index = settings.index()
    assert index.count(Filters(kinds=("abstract",))) == counts["papers"]  # one abstract point per paper
    assert index.count(Filters(kinds=("window",))) > counts["papers"]  # most abstracts are longer than a window
    # The two real malformed OpenAlex works (a null and an empty title) are reported, not loaded.
    assert {f.key for f in summary.failures} == {"W4234567890", "W2963341956"}


def test_paper_merged_from_arxiv_and_openalex(demo):
    catalog = demo.catalog()
    paper_id = catalog.resolve_paper_id("W3045921891")
    assert paper_id == "2007.14454"
    assert catalog.resolve_paper_id("https://arxiv.org/abs/2006.07357v2") == "2006.07357"
    view = catalog.paper_view("2006.07357")
    assert [a.name for a in view.authors][3] == "Bobby Yan" and len(view.authors) == 8
    assert view.paper.all_authors_matched


def test_second_run_changes_nothing(demo):
    before = demo.catalog().counts()
    summary = load_demo(demo.catalog(), demo.index(), demo.embedder())
    assert summary.counts["added"] == summary.counts["updated"] == summary.counts["indexed"] == 0
    assert summary.counts["unchanged"] > 5000
    assert demo.catalog().counts() == before
    assert demo.index().count(Filters(kinds=("abstract",))) == before["papers"]


def test_corrupt_records_are_reported_and_skipped(make_instance, tmp_path):
    root = tmp_path / "corpus"
    (root / "arxiv_metadata").mkdir(parents=True)
    shutil.copytree(DEMO_DIR / "seed", root / "seed")
    shutil.copytree(DEMO_DIR / "arxiv_records", root / "arxiv_records")
    good = (DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl").read_text().splitlines()[:3]
    template = json.loads(good[0])
    bad = [
        "{not json",
        json.dumps({**template, "id": "0704.9001", "title": None}),
        json.dumps({**template, "id": "0704.9002", "authors": None}),
        json.dumps({**template, "id": "0704.9003", "categories": ["not", "a", "string"]}),
        json.dumps({**template, "id": "0704.9004", "abstract": "x" * 10_000_000}),
        json.dumps(["a list, not a record"]),
    ]
    (root / "arxiv_metadata" / "mixed.jsonl").write_text("\n".join([good[0], *bad, *good[1:]]) + "\n")
    settings = make_instance(tmp_path / "data")
    summary = load_demo(settings.catalog(), settings.index(), settings.embedder(), root=root)
    assert settings.catalog().counts()["papers"] == 4  # three good lines and the seed record
    assert summary.counts["failed"] == len(bad)
    reasons = {f.key: f.reason for f in summary.failures}
    assert "not JSON" in reasons["line 2"] and "not an object" in reasons["line 7"]
    assert "title" in reasons["0704.9001"] and "abstract" in reasons["0704.9004"]
    written = summary.write_failures(tmp_path / "failures.jsonl").read_text().splitlines()
    assert len(written) == len(bad) and all(json.loads(line)["reason"] for line in written)
