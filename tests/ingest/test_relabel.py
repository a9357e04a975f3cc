"""Enrichment that changes only who wrote a paper (or its categories) updates the index's filter fields
without embedding the paper again, on every point of the paper, full-text passages included."""

from __future__ import annotations

from ingest.indexing import index_papers
from ingest.pipeline import load_records
from ingest.report import Summary
from ingest.writer import Writer
from retrieval.scholarly.records import AuthorRecord, PaperRecord
from retrieval.vectors.embeddings import Embedded
from retrieval.vectors.index import Filters


def test_new_people_relabel_points_without_reembedding(make_instance, tmp_path):
    settings = make_instance(tmp_path)
    catalog, index, embedder = settings.catalog(), settings.index(), settings.embedder()
    record = PaperRecord(
        id="2101.00001", arxiv_id="2101.00001", title="Sparse retrieval for long scientific documents",
        abstract="We study sparse retrieval over long documents and show where it fails.",
        authors=[AuthorRecord(name="Ana Lima")], categories=["cs.IR"], source="arxiv_api",
    )  # fmt: skip
    load_records(catalog, "arxiv_api", [record], Summary())
    index_papers(Writer(catalog, index, embedder), Summary())
    paper = catalog.papers(["2101.00001"])["2101.00001"]
    Writer(catalog, index, embedder).full_text(paper, ["Sparse retrieval fails on long documents. " * 5])
    from ingest.pdfs import STAGE
    from retrieval.scholarly.catalog import Catalog

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
    index_papers(Writer(catalog, index, embedder), summary)
    assert summary.counts["relabelled"] == 1 and summary.counts["indexed"] == 0
    assert index.count(Filters(researcher_id=researcher_id, kinds=("abstract",))) == 1
    assert index.count(Filters(researcher_id=researcher_id, kinds=("passage",))) >= 1
    assert index.count(Filters(researcher_id=researcher_id)) == index.count(Filters(paper_ids=("2101.00001",)))
    settings.close()


def test_authors_names_are_keywords_and_an_older_archive_gets_them_without_reembedding(make_instance, tmp_path):
    """BM25 reads the authors' names (the dense side reads title and abstract only). An archive indexed before that
    (two-part ledger digests, BM25 vectors without names) gets new BM25 vectors on the next run, with the dense
    vectors it has: nothing embedded again."""
    from ingest.writer import index_text
    from retrieval.vectors.points import IndexPoint
    from retrieval.vectors.store import SPARSE

    settings = make_instance(tmp_path)
    catalog, index, embedder = settings.catalog(), settings.index(), settings.embedder()
    record = PaperRecord(
        id="2101.00002", arxiv_id="2101.00002", title="Sparse retrieval for long scientific documents",
        abstract="We study sparse retrieval over long documents and show where it fails.",
        authors=[AuthorRecord(name="Ana Quintanilha"), AuthorRecord(name="Bo Zhang")], categories=["cs.IR"],
        source="arxiv_api",
    )  # fmt: skip
    load_records(catalog, "arxiv_api", [record], Summary())
    index_papers(Writer(catalog, index, embedder), Summary())

    def by_keyword(query: str) -> list[str]:
        return [hit.paper_id for hit in index.papers(embedder.query(query), limit=5, sides=(SPARSE,))]

    assert by_keyword("Quintanilha") == ["2101.00002"]
    dense = index.abstract_vector("2101.00002")

    # The archive as an older version left it: BM25 over the title and abstract, ledger digests in two parts.
    paper = catalog.papers(["2101.00002"])["2101.00002"]
    (old_sparse,) = embedder.sparse([index_text(paper)])
    index.upsert([IndexPoint(paper_id=paper.id, kind="abstract", number=0, vectors=Embedded(dense, old_sparse),
                             categories=paper.categories, published=paper.published)])  # fmt: skip
    digest = catalog.ledger_hashes("index")[paper.id]
    catalog.mark_all("index", {paper.id: ":".join(digest.split(":")[:2])})
    assert by_keyword("Quintanilha") == []

    summary = Summary()
    index_papers(Writer(catalog, index, embedder), summary)
    assert summary.counts["rewritten for keywords"] == 1 and summary.counts["indexed"] == 0
    assert by_keyword("Quintanilha") == ["2101.00002"]
    assert (index.abstract_vector("2101.00002") == dense).all()
    again = Summary()
    index_papers(Writer(catalog, index, embedder), again)
    assert not again.counts["rewritten for keywords"] and not again.counts["indexed"]
    settings.close()
