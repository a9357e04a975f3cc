"""Enrichment that changes only who wrote a paper (or its categories) updates the index's filter fields
without embedding the paper again, on every point of the paper, full-text passages included."""

from __future__ import annotations

from ingest.pipeline import index_fulltext, index_papers, load_records
from ingest.report import Summary
from retrieval.index import Filters
from retrieval.records import AuthorRecord, PaperRecord


def test_new_people_relabel_points_without_reembedding(make_instance, tmp_path):
    settings = make_instance(tmp_path)
    catalog, index, embedder = settings.catalog(), settings.index(), settings.embedder()
    record = PaperRecord(
        id="2101.00001", arxiv_id="2101.00001", title="Sparse retrieval for long scientific documents",
        abstract="We study sparse retrieval over long documents and show where it fails.",
        authors=[AuthorRecord(name="Ana Lima")], categories=["cs.IR"], source="arxiv_api",
    )  # fmt: skip
    load_records(catalog, "arxiv_api", [record], Summary())
    index_papers(catalog, index, embedder, Summary())
    paper = catalog.papers(["2101.00001"])["2101.00001"]
    index_fulltext(catalog, index, embedder, paper, ["Sparse retrieval fails on long documents. " * 5])
    from ingest.pdfs import STAGE
    from retrieval.catalog import Catalog

    with catalog.session() as session:
        Catalog.mark(session, STAGE, paper.id, "sha")
        session.commit()

    enriched = record.model_copy(
        update={"source": "openalex", "authors": [AuthorRecord(name="Ana Lima", openalex_id="A9")]}
    )
    load_records(catalog, "openalex", [enriched], Summary())
    researcher_id = catalog.paper_people()["2101.00001"][0][0]
    assert index.count(Filters(researcher_id=researcher_id)) == 0  # the new researcher is not in the index yet
    summary = Summary()
    index_papers(catalog, index, embedder, summary)
    assert summary.counts["relabelled"] == 1 and summary.counts["indexed"] == 0
    assert index.count(Filters(researcher_id=researcher_id, kinds=("abstract",))) == 1
    assert index.count(Filters(researcher_id=researcher_id, kinds=("passage",))) >= 1
    assert index.count(Filters(researcher_id=researcher_id)) == index.count(Filters(paper_ids=("2101.00001",)))
    settings.close()
