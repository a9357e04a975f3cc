"""What a reader is shown, judged: the judged questions of `tests/fixtures/judged_questions.jsonl` (topic, full-text
fact, people, absent subject; see `judged_questions.md` beside it) through the surfaces that list papers and
passages, per kind of question.

Run after `scholarloom ingest demo` (with the server stopped, the embedded index allows one process):
    .venv/bin/python -m bench.precision [--data-dir data/local] [--json] [--show]

Surfaces:
- "papers": `Archive.search` with 5 hits, what `/api/search`, the search page and the retrieval-only chat (its
  `search_papers` call) list;
- "passages": `Archive.passages` with 5 hits, what `/api/passages` and the chat's "From their full text" list.

A list shows the hits that clear the relevance floor (`retrieval.search.relevance`; `--no-floor`: every hit, as
lists did before it). Measures, per kind (nothing shown is an abstention):
- precision@5: the share of what is shown that is judged relevant (questions that showed something);
- recall@5: the relevant papers shown, over the relevant papers there are (at most 5, so a full list can reach 1);
- abstention: the share of questions that showed nothing: correct on absent subjects, wrong on the others;
- for facts, on passages: the share whose shown passages include the judged page of the judged paper, and the
  share whose shown passages contain the answer's words (`answer`).

And the answer line the retrieval-only chat leads with (`assistant.answer_line`; the whole turn, as a user asks
it): per kind, the share of questions given a line, the share given a right one (a fact's: holding the answer's
words on a judged paper; another kind's: from a judged relevant paper) and a wrong one.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from scholarloom.settings import Settings

JUDGED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judged_questions.jsonl"
KINDS = ("topic", "fact", "people", "absent")
SHOWN = 5


@dataclass(frozen=True)
class Judged:
    id: str
    kind: str
    question: str
    relevant: dict[str, int]
    pages: dict[str, list[int]]
    answer: list[str]


def load(path: Path = JUDGED) -> list[Judged]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            found.append(Judged(item["id"], item["kind"], item["question"], item["relevant"], item.get("pages", {}),
                                item.get("answer", [])))  # fmt: skip
    return found


def same_text(text: str) -> str:
    return " ".join(text.replace("\u2212", "-").split()).lower()


def judge_papers(question: Judged, shown: list[str]) -> dict:
    relevant = {p for p, grade in question.relevant.items() if grade > 0}
    hits = [p for p in shown if p in relevant]
    return {
        "shown": len(shown),
        "precision": len(hits) / len(shown) if shown else None,
        "recall": len(set(hits)) / min(len(relevant), SHOWN) if relevant else None,
        "abstained": not shown,
    }


def judge_passages(question: Judged, shown: list[tuple[str, int | None, str]]) -> dict:
    pages = {(paper, page) for paper, listed in question.pages.items() for page in listed}
    said = " ".join(same_text(text) for _, _, text in shown)
    return {
        "page": any((paper, page) in pages for paper, page, _ in shown),
        "answer": any(same_text(a) in said for a in question.answer),
    }


def run(archive, questions: list[Judged], floor: bool = True) -> list[dict]:
    """Each question's shown lists, judged: the hits that clear the relevance floor (all hits without `floor`)."""
    rows = []
    for question in questions:
        found = archive.search(question.question, limit=SHOWN, sentences=1).hits
        papers = [h.paper.id for h in found if h.clears or not floor]
        row = {"id": question.id, "kind": question.kind, "question": question.question, "papers": papers,
               **judge_papers(question, papers)}  # fmt: skip
        if question.kind == "fact":
            passages = [h for h in archive.passages(question.question, limit=SHOWN).hits if h.clears or not floor]
            row["passages"] = [(h.paper.id, h.page) for h in passages]
            row.update(judge_passages(question, [(h.paper.id, h.page, h.text) for h in passages]))
        rows.append(row)
    return rows


def answer_lines(archive, questions: list[Judged]) -> dict[str, dict]:
    """The retrieval-only chat's answer line per question (one turn each, no conversation before it)."""
    import asyncio

    from assistant.agent import Agent
    from assistant.tools import ToolDeps

    class Quiet:  # the turn's UI: nothing shown
        async def tool_started(self, name, arguments): return None  # noqa: E704
        async def tool_finished(self, handle, result): return None  # noqa: E704
        async def stream(self, text): return None  # noqa: E704
        async def finish(self, answer, cards): return None  # noqa: E704

    async def lines() -> dict[str, dict]:
        found = {}
        for question in questions:
            answer = await Agent(None).turn(ToolDeps(archive), [], question.question, Quiet())
            line = answer.lead
            if line is None:
                found[question.id] = {"line": None, "line right": False}
                continue
            relevant = question.relevant.get(line.evidence.paper_id, 0) > 0
            said = same_text(line.quote)
            right = relevant and (not question.answer or any(same_text(a) in said for a in question.answer))
            found[question.id] = {"line": line.quote, "line paper": line.evidence.paper_id,
                                  "line page": line.evidence.page, "line right": right}  # fmt: skip
        return found

    return asyncio.run(lines())


def line_summary(rows: list[dict]) -> dict[str, dict]:
    out = {}
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind and "line" in r]
        if mine:
            given = [r for r in mine if r["line"] is not None]
            out[kind] = {"questions": len(mine), "given": len(given) / len(mine),
                         "right": sum(r["line right"] for r in given) / len(mine),
                         "wrong": sum(not r["line right"] for r in given) / len(mine)}  # fmt: skip
    return out


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def summary(rows: list[dict]) -> dict[str, dict]:
    out = {}
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        out[kind] = {
            "questions": len(mine),
            "precision@5": _mean(r["precision"] for r in mine) if kind != "absent" else None,
            "recall@5": _mean(r["recall"] for r in mine),
            "abstained": _mean(float(r["abstained"]) for r in mine),
            "page found": _mean(float(r["page"]) for r in mine) if kind == "fact" else None,
            "answer found": _mean(float(r["answer"]) for r in mine) if kind == "fact" else None,
        }
    return out


def _cell(value) -> str:
    return "" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--json", action="store_true", help="print every question's row and the summary as JSON")
    parser.add_argument("--show", action="store_true", help="also list each question's shown papers")
    parser.add_argument("--no-floor", action="store_true", help="show every hit, as before the relevance floor")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    try:
        archive, questions = settings.archive(), load(args.judged)
        rows = run(archive, questions, floor=not args.no_floor)
        if not args.no_floor:
            lines = answer_lines(archive, questions)
            for row in rows:
                row.update(lines[row["id"]])
    finally:
        settings.close()
    totals, led = summary(rows), line_summary(rows)
    if args.json:
        print(json.dumps({"summary": totals, "lines": led, "questions": rows}, indent=1))
        return
    print(f"{len(rows)} judged questions ({args.judged.name}); {SHOWN} shown per list\n")
    print("| kind | questions | precision@5 shown | recall@5 | abstained | fact: judged page in passages | "
          "fact: answer in passages |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for kind, s in totals.items():
        print(f"| {kind} | {s['questions']} | {_cell(s['precision@5'])} | {_cell(s['recall@5'])} | "
              f"{_cell(s['abstained'])} | {_cell(s['page found'])} | {_cell(s['answer found'])} |")
    if led:
        print("\nThe answer line the retrieval-only chat leads with, per question asked:\n")
        print("| kind | questions | given a line | a right line | a wrong line |")
        print("| --- | --- | --- | --- | --- |")
        for kind, s in led.items():
            print(f"| {kind} | {s['questions']} | {_cell(s['given'])} | {_cell(s['right'])} | {_cell(s['wrong'])} |")
    if args.show:
        for r in rows:
            print(f"\n{r['id']} {r['question']!r}: precision {_cell(r['precision'])}, shown {r['papers']}")
            if r.get("line"):
                print(f"    line ({'right' if r['line right'] else 'wrong'}): {r['line'][:200]!r}")


if __name__ == "__main__":
    main()
