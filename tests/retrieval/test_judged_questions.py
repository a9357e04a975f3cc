"""The judged questions (tests/fixtures/judged_questions.jsonl, issue 39's ground truth) hold for the demo as it is:
every judged paper is in the catalog, each person's papers are all the papers with an author of that name, each
fact's answer stands on its judged page of the PDF, and the bench that measures them runs over the demo."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pypdf import PdfReader
from sqlmodel import select

from bench.precision import KINDS, judge_papers, judge_passages, load, run, same_text, summary
from retrieval.scholarly.models import Authorship, Paper, Researcher

PDFS = Path(__file__).resolve().parents[2] / "data" / "demo" / "pdfs"


def test_the_judged_set_has_every_kind_and_names_only_demo_papers(demo):
    questions = load()
    kinds = Counter(q.kind for q in questions)
    assert len(questions) >= 80 and set(kinds) == set(KINDS) and min(kinds.values()) >= 15, kinds
    assert len({q.id for q in questions}) == len(questions)
    assert len({q.question.lower() for q in questions}) == len(questions)
    with demo.catalog().session() as session:
        known = set(session.exec(select(Paper.id)))
        for q in questions:
            assert set(q.relevant) <= known, (q.id, set(q.relevant) - known)
            assert all(grade in (1, 2) for grade in q.relevant.values()), q.id
            assert bool(q.relevant) == (q.kind != "absent"), q.id
            assert set(q.pages) <= set(q.relevant), q.id


def test_a_persons_judged_papers_are_every_paper_with_an_author_of_that_name(demo):
    import json

    from bench.precision import JUDGED

    people = [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines() if '"people"' in line]
    assert people
    with demo.catalog().session() as session:
        for item in people:
            written = set(session.exec(select(Authorship.paper_id).join(Researcher,
                                       Researcher.id == Authorship.researcher_id)
                                       .where(Researcher.name == item["person"])))  # fmt: skip
            assert written == set(item["relevant"]), item["id"]


def test_each_facts_answer_stands_on_its_judged_page():
    texts: dict[str, list[str]] = {}
    facts = [q for q in load() if q.kind == "fact"]
    assert facts
    for q in facts:
        assert q.answer and q.pages, q.id
        for paper, pages in q.pages.items():
            if paper not in texts:
                texts[paper] = [same_text(page.extract_text() or "") for page in PdfReader(PDFS / f"{paper}.pdf").pages]
            on = [p for p in pages if any(same_text(a) in texts[paper][p - 1] for a in q.answer)]
            assert on, (q.id, paper, pages)


def test_the_bench_judges_what_is_shown():
    (question,) = [q for q in load() if q.id == "fact-01"]  # TripPy on MultiWOZ 2.1: one relevant paper, page 6
    judged = judge_papers(question, ["2005.02877", "2004.07180"])
    assert judged == {"shown": 2, "precision": 0.5, "recall": 1.0, "abstained": False}
    assert judge_papers(question, [])["abstained"] and judge_papers(question, [])["precision"] is None
    shown = [("2005.02877", 6, "TripPy 55.29\u00b10.28%"), ("2005.02877", 7, "TripPy (full sequence width)")]
    assert judge_passages(question, shown) == {"page": True, "answer": True}
    assert judge_passages(question, shown[1:]) == {"page": False, "answer": False}


def test_the_bench_runs_over_the_demo(demo):
    questions = load()
    rows = run(demo.archive(), questions)
    assert [r["id"] for r in rows] == [q.id for q in questions]
    totals = summary(rows)
    assert set(totals) == set(KINDS)
    assert all(len(r["papers"]) <= 5 for r in rows)
    assert all("page" in r and "answer" in r for r in rows if r["kind"] == "fact")
