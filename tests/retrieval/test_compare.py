"""Comparison cells: each the paper's own sentence for the aspect, never another paper's; the judged set."""

from __future__ import annotations

from retrieval.search.compare import DEFAULT_ASPECTS, MAX_ASPECTS, clean_aspects
from retrieval.search.evaluation import judge_cells
from retrieval.vectors.index import Filters
from retrieval.vectors.embeddings import split_sentences
from tests.conftest import FIXTURES

PAPERS = ["2004.07180", "1802.05365", "2005.02877"]  # SPECTER, ELMo, TripPy: all three with full text in the demo


def _said(text: str) -> str:
    return " ".join(text.split())


def _holds(archive, paper_id: str, cell) -> bool:
    """Whether the paper's abstract, or its full text on the cell's page, holds the cell's sentence."""
    paper = archive.papers([paper_id])[paper_id]
    if cell.page is None:
        return cell.source == "abstract" and _said(cell.text) in map(_said, split_sentences(paper.abstract))
    passages = archive.passages(cell.text, Filters(paper_ids=(paper_id,)), limit=10).hits
    return any(p.page == cell.page and _said(cell.text) in _said(p.text) for p in passages)


def test_every_cell_is_a_sentence_of_its_own_paper(demo):
    archive = demo.archive()
    aspects = [*DEFAULT_ASPECTS, "evaluation metric", "training details"]
    table = archive.compare(PAPERS, aspects)
    assert [p.id for p in table.papers] == PAPERS and table.aspects == aspects and not table.unknown
    full_text = 0
    for paper in table.papers:
        for aspect in aspects:
            cell = table.cell(paper.id, aspect)
            assert cell is not None and cell.paper_id == paper.id and cell.aspect == aspect
            assert _holds(archive, paper.id, cell), (paper.id, aspect, cell.text)
            others = [p for p in PAPERS if p != paper.id]
            assert not any(_holds(archive, other, cell) for other in others), (paper.id, aspect, cell.text)
            if cell.source == "full text":
                full_text += 1
                assert cell.page is not None and cell.where == f"p. {cell.page}"
            else:
                assert cell.where == "abstract"
    assert full_text >= 2  # aspects an abstract does not state come from the full text, with their page


def test_ids_and_aspects_are_cleaned(demo):
    table = demo.archive().compare(["2004.07180v1", "2004.07180", "9999.99999", "1802.05365"], None)
    assert [p.id for p in table.papers] == ["2004.07180", "1802.05365"] and table.unknown == ["9999.99999"]
    assert table.aspects == list(DEFAULT_ASPECTS)
    assert clean_aspects([" Task ", "task", "", "a\x00b", *map(str, range(9))])[:2] == ["Task", "a b"]
    assert len(clean_aspects([str(i) for i in range(20)])) == MAX_ASPECTS
    assert demo.archive().compare(["9999.99999"]).papers == []


def test_the_judged_set(demo):
    """20 aspect questions over six demo papers, each with the sentence a reader would pick (written from the
    abstracts for this test): the extractive cell is that sentence in at least 16."""
    judged = judge_cells(demo.archive(), FIXTURES / "compare_judged.jsonl")
    assert len(judged) == 20
    right = sum(j.right for j in judged)
    assert right >= 16, [(j.paper, j.aspect, j.picked) for j in judged if not j.right]
