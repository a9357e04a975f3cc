"""Questions that name a researcher, on the demo corpus: recall@10 of that person's papers through the library's
search (what the pages, /api/search and the agent's tools use), against the topic-only search it replaced.

Run after `scholarloom ingest demo` (with the server stopped, the embedded index allows one process):
    .venv/bin/python -m bench.people_search [--data-dir data/local] [--people 40]

The questions are written from the catalog: researchers with 1 to 5 papers, chosen with a fixed seed, each asked
in one of five forms ("papers by X", "what does X work on?", "X", "J. Surname", "x's work" without accents or
capitals). A question's recall is the share of the person's papers (at most 10) in the first ten results.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import defaultdict
from pathlib import Path

from sqlmodel import select

from retrieval.scholarly.models import Authorship, Researcher, normalise_name
from retrieval.search.hybrid import search
from scholarloom.settings import Settings

FORMS = (
    lambda r: f"papers by {r.name}",
    lambda r: f"what does {r.name} work on?",
    lambda r: r.name,
    lambda r: f"{r.name.split()[0][0]}. {r.name.split()[-1]}",
    lambda r: f"{normalise_name(r.name)}'s work",
)


def questions(settings: Settings, people: int) -> list[tuple[str, set[str]]]:
    with settings.catalog().session() as session:
        owned: dict[int, set[str]] = defaultdict(set)
        for researcher_id, paper_id in session.exec(select(Authorship.researcher_id, Authorship.paper_id)):
            owned[researcher_id].add(paper_id)
        chosen = [i for i in sorted(owned) if 1 <= len(owned[i]) <= 5]
        picked = random.Random(7).sample(chosen, people)
        names = {r.id: r for r in session.exec(select(Researcher).where(Researcher.id.in_(picked)))}
    asked = []
    for n, researcher_id in enumerate(picked):
        researcher = names[researcher_id]
        if len(researcher.name.split()) < 2:  # "J. Surname" needs two words
            continue
        asked.append((FORMS[n % len(FORMS)](researcher), owned[researcher_id]))
    return asked


def recall_at_10(hits: list[str], own: set[str]) -> float:
    return len(set(hits[:10]) & own) / min(len(own), 10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--people", type=int, default=40)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    archive = settings.archive()
    asked = questions(settings, args.people)
    rows = {"people first (library.search)": [], "topic only (retrieval.search.hybrid.search)": []}
    for question, own in asked:
        found = [h.paper.id for h in archive.search(question, limit=10).hits]
        plain = [h.paper.id for h in search(archive.catalog, archive.index, archive.embedder, question, limit=10).hits]
        rows["people first (library.search)"].append(recall_at_10(found, own))
        rows["topic only (retrieval.search.hybrid.search)"].append(recall_at_10(plain, own))
    print(f"{len(asked)} questions naming {len(asked)} researchers with 1-5 papers each\n")
    print("| search | recall@10 | questions with every paper in the first ten |")
    print("| --- | --- | --- |")
    for name, recalls in rows.items():
        whole = sum(r == 1.0 for r in recalls)
        print(f"| {name} | {statistics.mean(recalls):.3f} | {whole}/{len(recalls)} |")
    missed = [q for (q, own), r in zip(asked, rows["people first (library.search)"], strict=True) if r < 1.0]
    if missed:
        print("\nNot every paper found for: " + "; ".join(repr(q) for q in missed))
    settings.close()


if __name__ == "__main__":
    main()
