"""Hybrid search over the demo corpus, filters, and odd queries."""

from datetime import date

import pytest

from retrieval.search.hybrid import MAX_QUERY_CHARS, clean_query, search
from retrieval.vectors.index import Filters


def run(demo, query, **kwargs):
    return search(demo.catalog(), demo.index(), demo.embedder(), query, **kwargs)


def test_hindsight_logging_first(demo):
    result = run(demo, "replay log statements from checkpoints after training", sentences=1)
    assert result.hits[0].paper.id == "2006.07357"
    assert result.hits[0].sentences and "logging" in result.hits[0].sentences[0].lower()


def test_matching_sentences_come_from_the_abstract(demo):
    result = run(demo, "graph convolutional networks for semi-supervised classification", limit=5, sentences=2)
    for hit in result.hits:
        assert 1 <= len(hit.sentences) <= 2
        assert all(sentence in hit.paper.abstract for sentence in hit.sentences)


def test_category_filter_returns_only_that_category(demo):
    result = run(demo, "neural networks", filters=Filters(categories=("hep-ph",)), limit=10)
    assert result.hits
    assert all("hep-ph" in h.paper.categories for h in result.hits)


def test_date_filter(demo):
    window = Filters(published_from=date(2007, 4, 1), published_to=date(2007, 4, 30))
    result = run(demo, "quantum field theory", filters=window, limit=10)
    assert result.hits
    for hit in result.hits:
        assert date(2007, 4, 1) <= hit.paper.published.date() <= date(2007, 4, 30)


def _busiest(demo, column):
    """The researcher (or institution) with the most papers in the demo corpus, and those papers."""
    from sqlalchemy import func
    from sqlmodel import select

    from retrieval.scholarly.models import Authorship

    with demo.catalog().session() as session:
        top = session.exec(
            select(column, func.count(func.distinct(Authorship.paper_id)))
            .where(column.is_not(None))
            .group_by(column)
            .order_by(func.count(func.distinct(Authorship.paper_id)).desc())
        ).first()
        papers = set(session.exec(select(Authorship.paper_id).where(column == top[0])).all())
    return top[0], papers


@pytest.mark.parametrize("kind", ["researcher", "institution"])
def test_people_filters_return_only_their_papers(demo, kind):
    from retrieval.scholarly.models import Authorship

    column = Authorship.researcher_id if kind == "researcher" else Authorship.institution_id
    entity, theirs = _busiest(demo, column)
    assert len(theirs) >= 2
    filters = Filters(researcher_id=entity) if kind == "researcher" else Filters(institution_id=entity)
    result = run(demo, "results", filters=filters, limit=20)
    found = {h.paper.id for h in result.hits}
    assert found and found <= theirs
    assert found == theirs or len(found) == 20


def test_this_paper_only(demo):
    result = run(demo, "checkpoints", filters=Filters(paper_ids=("0704.0001",)), limit=5)
    assert [h.paper.id for h in result.hits] == ["0704.0001"]


def test_results_are_grouped_per_paper_and_ranked(demo):
    result = run(demo, "graph convolutional networks", limit=8)
    ids = [h.paper.id for h in result.hits]
    assert len(ids) == len(set(ids)) == 8
    assert [h.rank for h in result.hits] == list(range(1, 9))


@pytest.mark.parametrize(
    "query",
    ["", "   ", "\x00\x01\x02", "the of and to in", "a" * 10_000, "graph\x00 neural\nnetworks\u202e"],
)
def test_odd_queries_give_a_clear_result(demo, query):
    result = run(demo, query, limit=5)
    assert len(result.query) <= MAX_QUERY_CHARS
    if not result.query:
        assert result.hits == [] and "empty" in result.note
    else:
        assert result.hits or result.note


def test_clean_query_strips_controls():
    assert clean_query("graph\x00 neural\n\tnetworks\u202e") == "graph neural networks"


def test_remembered_sentence_vectors_match_fresh_ones_and_stay_bounded(demo):
    from retrieval.vectors.embeddings import Embedder

    embedder = Embedder(demo.models_dir, remembered_texts=3)
    texts = ["Graphs are everywhere.", "We train a model.", "Graphs are everywhere.", "Logs help debugging."]
    remembered = embedder.dense_remembered(texts)
    fresh = embedder.dense(texts)
    assert remembered.shape == fresh.shape and float(abs(remembered - fresh).max()) < 1e-5
    assert list(embedder._remembered) == ["Graphs are everywhere.", "We train a model.", "Logs help debugging."]
    embedder.dense_remembered(["A fourth sentence."])
    assert len(embedder._remembered) == 3 and "Graphs are everywhere." not in embedder._remembered
    assert embedder.dense_remembered([]).shape == (0, fresh.shape[1])


def test_institutions_stored_before_search_keys_get_them(tmp_path):
    """A catalog written by a version without `institutions.search_key` gains the column and the keys on open."""
    import sqlite3

    from sqlmodel import select

    from retrieval.scholarly.catalog import Catalog
    from retrieval.scholarly.models import Institution
    from tests.retrieval.test_schema import release_database

    url = f"sqlite:///{tmp_path / 'old.db'}"
    release_database(tmp_path / "old.db")  # made before migrations, by the last release
    with sqlite3.connect(tmp_path / "old.db") as db:  # as an older version left it
        db.execute("DELETE FROM institutions")
        db.execute("ALTER TABLE institutions DROP COLUMN search_key")
        db.execute(
            "INSERT INTO institutions (name, aliases, acronyms, types, parent_rors, child_rors)"
            " VALUES ('Université de Montréal', '[\"UdeM\"]', '[]', '[]', '[]', '[]')"
        )
    catalog = Catalog(url)
    with catalog.session() as session:
        (institution,) = session.exec(select(Institution)).all()
    assert institution.search_key == "universite de montreal udem"
    catalog.close()


def test_a_query_asked_twice_is_embedded_once(embedder, monkeypatch):
    """Retrieval-only mode searches the papers and then their full text with the same words: the second search
    reuses the first's vectors, which nobody may change."""
    dense, _ = embedder._load()
    asked = []
    real = dense.vectors
    monkeypatch.setattr(dense, "vectors", lambda texts, batch: asked.extend(texts) or real(texts, batch))
    first = embedder.query("replaying log statements from training checkpoints, asked twice")
    second = embedder.query("replaying log statements from training checkpoints, asked twice")
    assert asked == ["replaying log statements from training checkpoints, asked twice"] and second is first
    assert not first.dense.flags.writeable
