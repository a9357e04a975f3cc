"""Sentence windows and score fusion: the pure parts of indexing and ranking."""

import pytest

from retrieval.vectors.index import FusionParams, by_max, fuse, group_max, minmax, reciprocal_rank
from retrieval.vectors.store import PointHit
from retrieval.vectors.embeddings import chunk_spans, sentence_windows, split_sentences


@pytest.mark.parametrize("overlap", [True, False])
@pytest.mark.parametrize(
    "lengths,budget",
    [([10] * 12, 35), ([5, 50, 5, 5, 60, 1], 40), ([100], 20), ([3, 3, 3], 100), ([7] * 40, 7)],
)
def test_windows_cover_every_sentence_within_budget(lengths, budget, overlap):
    windows = sentence_windows(lengths, budget, overlap=overlap)
    covered = sorted({i for a, b in windows for i in range(a, b)})
    assert covered == list(range(len(lengths)))
    for a, b in windows:
        assert b > a
        assert sum(lengths[a:b]) <= budget or b - a == 1  # only a lone long sentence may exceed it
    starts = [a for a, _ in windows]
    assert starts == sorted(set(starts))  # always moving forward, never the same window twice
    if not overlap:
        assert all(windows[i][1] == windows[i + 1][0] for i in range(len(windows) - 1))


def test_overlapping_windows_start_halfway():
    assert sentence_windows([10] * 8, 40) == [(0, 4), (2, 6), (4, 8)]
    assert sentence_windows([10] * 8, 40, overlap=False) == [(0, 4), (4, 8)]


def test_chunk_spans_keeps_short_text_whole():
    count = lambda xs: [len(x.split()) for x in xs]  # noqa: E731
    text = "One two three. Four five six. Seven eight nine."
    sentences, spans = chunk_spans(text, count, budget=100)
    assert spans == [(0, 3)] and " ".join(sentences) == text
    assert chunk_spans(text, count, budget=6) == (sentences, [(0, 2), (1, 3)])
    assert chunk_spans(text, count, budget=6, overlap=False)[1] == [(0, 2), (2, 3)]
    assert chunk_spans("", count, budget=10) == ([], [])


def test_split_sentences():
    text = "We test it (see Fig. 2). Results hold. 3 models agree! [1] shows more"
    assert split_sentences(text) == ["We test it (see Fig. 2).", "Results hold.", "3 models agree!", "[1] shows more"]


def test_by_max_and_minmax():
    assert by_max({"a": 2.0, "b": 1.0, "c": -1.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert minmax({"a": 3.0, "b": 1.0, "c": 2.0}) == {"a": 1.0, "b": 0.0, "c": 0.5}
    assert minmax({"a": 1.0, "b": 1.0}) == {"a": 1.0, "b": 1.0}
    assert by_max({}) == minmax({}) == {}
    assert reciprocal_rank({"a": 0.1, "b": 0.9}) == {"b": 1 / 61, "a": 1 / 62}


def test_fuse_mixes_sides_and_counts_missing_as_zero():
    params = FusionParams(method="max", dense_weight=0.6)
    fused = fuse({"a": 0.8, "b": 0.4}, {"b": 10.0, "c": 5.0}, params)
    assert fused == pytest.approx({"a": 0.6, "b": 0.6 * 0.5 + 0.4, "c": 0.4 * 0.5})
    assert fuse({"a": 0.5}, {}, params) == {"a": 1.0}  # a query of stop words only: dense decides
    assert fuse({}, {"c": 2.0}, params) == pytest.approx({"c": 0.4})


def test_group_max_keeps_each_papers_best_point():
    hits = [PointHit("p1", "window", 2, "", None, None, 0.5), PointHit("p1", "abstract", 0, "", None, None, 0.7)]
    hits.append(PointHit("p2", "abstract", 0, "", None, None, 0.6))
    best = group_max(hits)
    assert {k: (v.kind, v.score) for k, v in best.items()} == {"p1": ("abstract", 0.7), "p2": ("abstract", 0.6)}
