"""A name the encoder does not know: every catalog paper whose title begins with a one-word name and a colon
("TinyBERT: Distilling BERT ...", "Pyserini: A Python Toolkit ..."), asked for by that name in three forms, and
questions about subjects the archive does not hold that share a word with such a title.

    .venv/bin/python -m bench.named_papers --data-dir /tmp/demo [--show]

Per form ("X", "What is X?", "How does X work?"), and apart for names the query coins (capitals past the first
letter, or letters with digits: `retrieval.search.relevance.coined_terms`) and plain words ("Pyserini"): how often
the paper named X is shown (clears the relevance floor) first, at all, and how often the search abstains. Then
the off-subject questions and what each shows (nothing, when the floor does its work).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from sqlmodel import select

from retrieval.scholarly.models import Paper
from retrieval.search.relevance import coined_terms
from scholarloom.settings import Settings

FORMS = ("{}", "What is {}?", "How does {} work?")
_HEAD = re.compile(r"^([^\s:]+):\s")
# Subjects the demo does not hold, each sharing a word with a title that leads with it, or naming something
OFF_SUBJECT = (
    "MAC address spoofing on home routers", "the CORE curriculum in US high schools", "SIGMA rule detection for SIEM",
    "LASER eye surgery recovery time", "POLAR bear populations in the Arctic", "AIR pollution and asthma in children",
    "TARA ocean expedition plankton", "GPU prices in 2024", "COVID-19 vaccines", "CRISPR off-target effects",
    "5G towers and health", "CO2 emissions of cement production", "H2O ice on Mars", "iPhone battery life",
    "USB-C charging standards", "WAY of the samurai", "DNA methylation in ageing", "HIV vaccine trials",
    "MRI safety with pacemakers", "memory of honeybees", "hindsight bias in hiring", "Janus-faced politicians",
    "the Nova Scotia fisheries", "Deep sea mining", "Learning Spanish grammar", "Value of art in auctions",
)  # fmt: skip


def named(archive) -> list[tuple[str, str]]:
    """(paper id, name) for each paper with an abstract whose title leads with a one-word name and a colon."""
    with archive.catalog.session() as session:
        rows = session.exec(select(Paper.id, Paper.title).where(Paper.abstract != "")).all()
    return [(pid, m.group(1)) for pid, title in rows if (m := _HEAD.match(title or ""))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--show", action="store_true", help="also list each name whose paper is not shown first")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    try:
        archive = settings.archive()
        papers = named(archive)
        groups = {"coined": [(p, n) for p, n in papers if coined_terms(n)],
                  "plain": [(p, n) for p, n in papers if not coined_terms(n)]}  # fmt: skip
        print("| names | form | papers | its paper first | its paper shown | abstained |")
        print("| --- | --- | --- | --- | --- | --- |")
        missed = []
        for label, group in groups.items():
            for form in FORMS:
                first = shown = weak = 0
                for pid, name in group:
                    result = archive.search(form.format(name), limit=5)
                    cleared = [h.paper.id for h in result.hits if h.clears]
                    first += bool(cleared) and cleared[0] == pid
                    shown += pid in cleared
                    weak += result.weak
                    if form == "{}" and (not cleared or cleared[0] != pid):
                        missed.append(name)
                print(f"| {label} | {form.format('X')} | {len(group)} | {first} | {shown} | {weak} |")
        print("\nOff-subject questions, what each shows:\n")
        for question in OFF_SUBJECT:
            result = archive.search(question, limit=5)
            print(f"- {question}: {[h.paper.title[:60] for h in result.hits if h.clears] or 'nothing'}")
        if args.show:
            print(f"\nNames whose paper is not shown first: {missed}")
    finally:
        settings.close()


if __name__ == "__main__":
    main()
