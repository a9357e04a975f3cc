"""Both vector stores behind one interface: same answers, filters honoured, persistence and one owner."""

from datetime import date, datetime, timezone

import numpy as np
import pytest

from retrieval.vectors.edge import EdgeStore
from retrieval.vectors.embeddings import Embedded, SparseVector
from retrieval.vectors.index import Filters, FusionParams, Index, IndexUnavailable
from retrieval.vectors.points import IndexPoint
from retrieval.vectors.server import ClientStore
from retrieval.vectors.store import ANYONE, DENSE, SPARSE, VectorQuery

RNG = np.random.default_rng(7)
N = 120


def _unit(v):
    return (v / np.linalg.norm(v)).astype(np.float32)


def _points():
    points = []
    for i in range(N):
        terms = sorted({int(t) for t in RNG.integers(1, 60, size=6)})
        vectors = Embedded(_unit(RNG.normal(size=384)), SparseVector(terms, [1.0 + (t % 3) for t in terms]))
        points.append(
            IndexPoint(
                paper_id=f"p{i:03d}",
                kind="abstract",
                number=0,
                vectors=vectors,
                categories=["cs.LG" if i % 3 == 0 else "hep-ph", "stat.ML"] if i % 2 else ["cs.CL"],
                published=datetime(2020 + i % 5, 1 + i % 12, 1, tzinfo=timezone.utc),
                researcher_ids=[i % 7, 100 + i % 11],
                institution_ids=[i % 4],
            )
        )
        if i % 10 == 0:  # some papers have windows (dense only)
            window = Embedded(_unit(RNG.normal(size=384)), SparseVector([], []))
            points.append(
                IndexPoint(
                    f"p{i:03d}", "window", 1, window, categories=points[-1].categories, published=points[-1].published
                )
            )
    return points


POINTS = _points()
BY_PAPER = {p.paper_id: p for p in POINTS if p.kind == "abstract"}


@pytest.fixture(params=["edge", "client-local"])
def index(request, tmp_path):
    if request.param == "edge":
        store = EdgeStore(tmp_path / "edge")
    else:
        from qdrant_client import QdrantClient

        store = ClientStore(QdrantClient(location=":memory:"), "test", local=True)
    index = Index(store)
    index.upsert(POINTS)
    yield index
    index.close()


def _query(seed=1):
    rng = np.random.default_rng(seed)
    return Embedded(_unit(rng.normal(size=384)), SparseVector([3, 17, 42], [1.0, 1.0, 1.0]))


def test_both_stores_rank_alike(tmp_path):
    from qdrant_client import QdrantClient

    edge = Index(EdgeStore(tmp_path / "edge"))
    client = Index(ClientStore(QdrantClient(location=":memory:"), "test", local=True))
    for index in (edge, client):
        index.upsert(POINTS)
    for seed in range(5):
        query = _query(seed)
        a = edge.papers(query, limit=20)
        b = client.papers(query, limit=20)
        assert [s.paper_id for s in a] == [s.paper_id for s in b]
        assert [s.score for s in a] == pytest.approx([s.score for s in b], abs=1e-4)  # float32 vs float64
    edge.close()
    client.close()


def test_count_and_exact_dense_order(index):
    assert index.count() == len(POINTS)
    assert index.count(Filters(kinds=("window",))) == N // 10
    query = _query()
    hits = index.store.search([VectorQuery(DENSE, query.dense, 5)])[0]
    expected = sorted(POINTS, key=lambda p: -float(p.vectors.dense @ query.dense))[:5]
    assert [(h.paper_id, h.kind) for h in hits] == [(p.paper_id, p.kind) for p in expected]


@pytest.mark.parametrize(
    "filters,check",
    [
        (Filters(categories=("cs.LG",)), lambda p: "cs.LG" in p.categories),
        (Filters(categories=("cs.CL", "cs.LG")), lambda p: {"cs.CL", "cs.LG"} & set(p.categories)),
        (Filters(published_from=date(2022, 1, 1), published_to=date(2022, 12, 31)), lambda p: p.published.year == 2022),
        (Filters(published_from=date(2023, 6, 1)), lambda p: p.published.date() >= date(2023, 6, 1)),
        (Filters(researcher_id=3), lambda p: 3 in p.researcher_ids),
        (Filters(institution_id=2), lambda p: 2 in p.institution_ids),
        (Filters(paper_ids=("p010", "p011")), lambda p: p.paper_id in ("p010", "p011")),
        (Filters(categories=("cs.LG",), researcher_id=3), lambda p: "cs.LG" in p.categories and 3 in p.researcher_ids),
    ],
)
def test_filters_return_only_matching_papers(index, filters, check):
    expected = {pid for pid, p in BY_PAPER.items() if check(p)}
    assert expected  # the filter selects something, so an empty answer would fail
    found = {s.paper_id for s in index.papers(_query(), filters, limit=100)}
    assert found and found <= expected
    # every matching paper is reachable: dense candidates cover the whole filtered set at this size
    assert found == expected


def test_replace_drops_stale_windows(index):
    index.replace(
        ["p010"], [p for p in POINTS if p.paper_id == "p010" and p.kind == "abstract"], ("abstract", "window")
    )
    assert index.count(Filters(paper_ids=("p010",))) == 1
    assert index.count() == len(POINTS) - 1


def test_a_paper_only_the_bm25_side_found_is_fused_with_its_own_dense_score(index):
    """Each side fetches `candidates` points; a paper the BM25 side found below the dense side's depth gets its best
    dense point (abstract or window) by a search of its own points, not a 0 on the dense side."""
    index.params = FusionParams(candidates=5)
    query = _query()
    cosine = {}
    for p in POINTS:
        score = float(np.dot(query.dense, p.vectors.dense))
        cosine[p.paper_id] = max(cosine.get(p.paper_id, -1.0), score)
    dense_top = {h.paper_id for h in index.store.search([VectorQuery(DENSE, query.dense, 5, Filters())])[0]}
    found = index.papers(query, limit=10)
    assert {s.paper_id for s in found if s.sparse is not None} - dense_top  # BM25 alone found some of them
    for s in found:
        assert s.dense is not None and s.dense.score == pytest.approx(cosine[s.paper_id], abs=1e-4), s.paper_id


def test_scoring_only_the_papers_that_may_rank_changes_no_ranking(index, monkeypatch):
    """Of the papers only BM25 found, those that cannot reach the first `limit` even at the dense side's lowest score
    are not scored: the ranking is the one scoring them all gives, and some were indeed left out."""
    index.params = FusionParams(candidates=20)
    may_rank, left_out = Index._may_rank, []

    def counted(self, dense_best, sparse_best, limit):
        kept = may_rank(self, dense_best, sparse_best, limit)
        left_out.append(len([k for k in sparse_best if k not in dense_best]) - len(kept))
        return kept

    for seed in range(1, 9):
        query = _query(seed)
        monkeypatch.setattr(Index, "_may_rank", counted)
        some = [(s.paper_id, round(s.score, 6)) for s in index.papers(query, limit=5)]
        monkeypatch.setattr(Index, "_may_rank", lambda self, d, s, limit: [k for k in s if k not in d])
        assert some == [(s.paper_id, round(s.score, 6)) for s in index.papers(query, limit=5)]
    assert sum(left_out) > 0


def test_query_of_stop_words_only_uses_dense(index):
    query = Embedded(_query().dense, SparseVector([], []))
    assert len(index.papers(query, limit=10)) == 10


def test_edge_store_persists_and_has_one_owner(tmp_path):
    store = EdgeStore(tmp_path / "edge")
    Index(store).upsert(POINTS[:10])
    store.optimize()
    with pytest.raises(IndexUnavailable, match="another ScholarLoom process"):
        EdgeStore(tmp_path / "edge")
    # The refused attempt left the owner's files alone: it goes on writing and flushing.
    Index(store).upsert(POINTS[10:20])
    store.optimize()
    store.close()
    reopened = EdgeStore(tmp_path / "edge")
    assert reopened.count() == 20
    assert reopened.search([VectorQuery(SPARSE, _query().sparse, 3)])
    reopened.close()


def test_a_papers_stored_abstract_vector_comes_back(index):
    """What the paper page's similar papers start from (no embedding per view), on both stores."""
    for paper_id in ("p000", "p017", "p119"):
        assert np.allclose(index.abstract_vector(paper_id), BY_PAPER[paper_id].vectors.dense, atol=1e-6)
    assert index.abstract_vector("nothing-here") is None


def test_every_point_is_read_back_as_written_in_chunks(index, tmp_path):
    """What a backup reads: every point, private ones too, with its vectors and payload, on both stores; loaded into
    a new store they answer a search the same way."""
    index.upsert(_owned("upload:1", "alice", 3))
    chunks = list(index.points(chunk=50))
    read = [p for chunk in chunks for p in chunk]
    assert len(chunks) == -(-len(read) // 50) and len(read) == index.count() == len(POINTS) + 2
    assert len({p.id for p in read}) == len(read)
    by_id = {p.id: p for p in read}
    for written in POINTS[:30] + _owned("upload:1", "alice", 3):
        stored = written.stored()
        again = by_id[stored.id]
        assert np.allclose(again.dense, stored.dense, atol=1e-6) and again.payload == stored.payload
        if stored.sparse is not None and stored.sparse.indices:
            assert again.sparse.indices == stored.sparse.indices
            assert np.allclose(again.sparse.values, stored.sparse.values)
    copy = Index(EdgeStore(tmp_path / "copy"))
    for chunk in chunks:
        copy.load(chunk)
    query = _query(5)
    assert [h.paper_id for h in copy.papers(query, limit=10)] == [h.paper_id for h in index.papers(query, limit=10)]
    copy.close()


def _owned(paper_id: str, owner: str, seed: int) -> list[IndexPoint]:
    vectors = Embedded(_query(seed).dense, SparseVector([3, 17, 42], [5.0, 5.0, 5.0]))
    return [IndexPoint(paper_id, kind, 0, vectors, text="private", owner=owner) for kind in ("abstract", "passage")]


def test_a_private_point_is_found_by_its_owner_alone(index):
    """Each point is its query's nearest neighbour and best keyword match, so only the owner filter hides it."""
    index.upsert(_owned("upload:1", "alice", 11) + _owned("upload:2", "bob", 12))
    for viewer, mine, theirs in (("alice", "upload:1", "upload:2"), ("bob", "upload:2", "upload:1")):
        for seed, paper in ((11, "upload:1"), (12, "upload:2")):
            papers = [s.paper_id for s in index.papers(_query(seed), Filters(viewer=viewer), limit=5)]
            passages = [h.paper_id for h in index.passages(_query(seed), Filters(viewer=viewer), limit=5)]
            assert (paper in papers, paper in passages) == ((paper == mine),) * 2
            assert theirs not in papers + passages
        assert index.count(Filters(viewer=viewer)) == len(POINTS) + 2
    for filters in (Filters(), Filters(paper_ids=("upload:1", "upload:2")), Filters(categories=("cs.CL",))):
        for seed in (11, 12):  # anonymous: public points only, whatever else the filter names
            found = [s.paper_id for s in index.papers(_query(seed), filters, limit=5)]
            found += [h.paper_id for h in index.passages(_query(seed), filters, limit=5)]
            assert not {"upload:1", "upload:2"} & set(found)
    assert index.count(Filters()) == len(POINTS)
    assert index.count() == len(POINTS) + 4  # upkeep (no filter) counts everyone's points
    index.replace(["upload:1"], [], ("abstract", "passage"))  # deleting needs no viewer
    assert index.count(Filters(paper_ids=("upload:1",), viewer="alice")) == 0


def test_an_index_made_before_the_owner_field_gets_its_payload_index(tmp_path):
    store = EdgeStore(tmp_path / "edge")
    store.shard.update(store.q.UpdateOperation.delete_field_index("owner"))
    assert "owner" not in store.shard.info().payload_schema
    store.close()
    reopened = EdgeStore(tmp_path / "edge")
    assert "owner" in reopened.shard.info().payload_schema
    reopened.close()


def test_a_condition_every_point_meets_is_left_out_until_one_does_not(tmp_path):
    """Qdrant checks each condition at every point a filtered search visits, so the embedded store leaves out those
    every point it holds meets (the kinds asked for, whose private points may match) and keeps them from the first
    write that holds a point which does not."""
    store = EdgeStore(tmp_path / "edge")
    index = Index(store)
    index.upsert(POINTS)
    paper_side = Filters(categories=("cs.CL",), kinds=("abstract", "window"), viewer="alice")
    assert store._needed(paper_side) == Filters(categories=("cs.CL",), viewer=ANYONE)
    assert store._needed(Filters(kinds=("abstract",))) == Filters(kinds=("abstract",), viewer=ANYONE)
    # a full-text passage that is the query's best match on both sides, in the category searched
    nearest = Embedded(_query(21).dense, SparseVector([3, 17, 42], [5.0, 5.0, 5.0]))
    index.upsert([IndexPoint("p900", "passage", 0, nearest, text="full text", categories=["cs.CL"])])
    assert store._needed(paper_side).kinds == ("abstract", "window")
    assert "p900" not in {s.paper_id for s in index.papers(_query(21), Filters(categories=("cs.CL",)), limit=5)}
    assert "p900" in {h.paper_id for h in index.passages(_query(21), Filters(categories=("cs.CL",)), limit=5)}
    # private points: alice's alone leave her search free of the owner condition, never anyone else's
    index.upsert(_owned("upload:1", "alice", 11))
    assert store._needed(Filters(viewer="alice")).viewer == ANYONE
    assert store._needed(Filters(viewer="bob")).viewer == "bob" and store._needed(Filters()).viewer is None
    assert "upload:1" in {s.paper_id for s in index.papers(_query(11), Filters(viewer="alice"), limit=5)}
    for viewer in ("bob", None):
        assert "upload:1" not in {s.paper_id for s in index.papers(_query(11), Filters(viewer=viewer), limit=5)}
    index.upsert(_owned("upload:2", "bob", 12))
    assert store._needed(Filters(viewer="alice")).viewer == "alice"
    assert "upload:2" not in {s.paper_id for s in index.papers(_query(12), Filters(viewer="alice"), limit=5)}
    index.close()


def test_a_shard_made_with_qdrants_default_bm25_threshold_says_so(tmp_path):
    """A shard made now keeps the BM25 full-scan threshold in each segment; one made before (Qdrant's default) is
    named by `behind`, and answers all the same."""
    new = EdgeStore(tmp_path / "new")
    Index(new).upsert(POINTS)
    assert new.behind() == []
    new.close()
    import qdrant_edge as q

    config = q.EdgeConfig(vectors={DENSE: q.EdgeVectorParams(size=384, distance=q.Distance.Cosine)},
                          sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)})  # fmt: skip
    q.EdgeShard.create(str(tmp_path / "old"), config).close()
    old = Index(EdgeStore(tmp_path / "old"))
    old.upsert(POINTS)
    (said,) = old.behind()
    assert "BM25" in said and "20,000" in said
    again = Index(EdgeStore(tmp_path / "new"))
    for filters in (Filters(), Filters(categories=("cs.CL",))):
        expected = [s.paper_id for s in again.papers(_query(3), filters)]
        assert [s.paper_id for s in old.papers(_query(3), filters)] == expected
    old.close()
    again.close()
