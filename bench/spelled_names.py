"""Names the archive spells out: every name an abstract or a full-text passage of the archive defines by spelling it
out ("Stanford Question Answering Dataset (SQuAD)", "Group Relative Policy Optimization (GRPO)", "FED (fine-grained
evaluation of dialog)"), asked for by that name alone and as "What is X?".

    .venv/bin/python -m bench.spelled_names --data-dir /tmp/demo [--no-reading] [--show N]

The encoder does not know most such names: "What is GRPO?" scores no abstract above the relevance floor. The
search reads the name as the archive spells it out and asks again (`retrieval.search.spelling`, `spelled_out`).
`--no-reading` turns that off, for the figures before. Per form: how often something is shown (clears the floor),
how often what is shown names X (its title, abstract or passage holds X or its spelling), how often one of the
papers that spell X out is shown, how often the search abstains, and how often its note says how it read X. For
"What is X?", also how often the retrieval-only answer leads with a line, and how often that line holds X's
spelling (a definition). `--show N`: N of the questions answered differently from the reading, with what they
show.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
from collections import defaultdict
from pathlib import Path

from sqlmodel import select

from retrieval.scholarly.models import Paper
from retrieval.search import spelling
from retrieval.search.relevance import coined_terms, says
from retrieval.search.spelling import spelled_out
from scholarloom.settings import Settings

FORMS = ("{}", "What is {}?")
_BRACKETED = re.compile(r"\(([A-Za-z][\w-]{1,15})\)")  # "... (SQuAD)"
_BEFORE = re.compile(r"(?<![\w-])([A-Za-z][\w-]{1,15}) \(")  # "FED (fine-grained evaluation of dialog)"


def spelled(archive) -> dict[str, tuple[str, set[str]]]:
    """name -> (the spelling most texts give, the papers whose abstract or passages spell it out), for each coined
    name (`coined_terms`) the texts spell out (`spelled_out`)."""
    texts: list[tuple[str, str]] = []
    with archive.catalog.session() as session:
        texts += [(pid, f"{title} {abstract}") for pid, title, abstract in
                  session.exec(select(Paper.id, Paper.title, Paper.abstract).where(Paper.abstract != ""))]  # fmt: skip
    for chunk in archive.index.points():
        texts += [(p.payload["paper_id"], p.payload["text"]) for p in chunk if p.payload.get("text")]
    spellings: dict[str, list[str]] = defaultdict(list)
    papers: dict[str, set[str]] = defaultdict(set)
    for pid, text in texts:
        for m in [*_BRACKETED.finditer(text), *_BEFORE.finditer(text)]:
            name = m.group(1)
            name = name[:-1] if name.endswith("s") and name[:-1].isupper() else name
            if coined_terms(name) != [name.lower()]:
                continue
            words = spelled_out(name, [text[max(0, m.start() - 200) : m.end() + 100]])
            if words:
                spellings[name].append(words)
                papers[name].add(pid)
    return {name: (spelled_out(name, [f"{w} ({name})" for w in found]) or found[0], papers[name])
            for name, found in sorted(spellings.items())}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--no-reading", action="store_true", help="search without reading names as spelled out")
    parser.add_argument("--show", type=int, default=0, help="list N questions (at random) and what they show")
    args = parser.parse_args()
    if args.no_reading:
        spelling.read_spelled_names = lambda *_: {}  # the search as it was: a name is never read as spelled out
    from assistant.agent import Agent
    from assistant.tools import ToolDeps
    from bench.retrieval_only_time import _Quiet

    settings = Settings(data_dir=args.data_dir)
    try:
        archive = settings.archive()
        names = spelled(archive)
        print(f"{len(names)} names spelled out in the archive's abstracts and passages\n")
        print("| form | questions | something shown | what is shown names X | a paper spelling X out shown | "
              "abstained | read as spelled out | answer line | line spells X out |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        shown_of: dict[str, list[str]] = {}
        for form in FORMS:
            counts = dict.fromkeys(("shown", "names", "spellers", "weak", "read", "line", "defines"), 0)
            for name, (words, spellers) in names.items():
                question = form.format(name)
                result = archive.search(question, limit=5)
                cleared = [h for h in result.hits if h.clears]
                counts["shown"] += bool(cleared)
                counts["names"] += any(says(f"{h.paper.title} {h.paper.abstract}".lower(), name.lower())
                                       or words.lower() in f"{h.paper.title} {h.paper.abstract}".lower()
                                       or h.kind == "passage" for h in cleared)  # fmt: skip
                counts["spellers"] += any(h.paper.id in spellers for h in cleared)
                counts["weak"] += result.weak
                counts["read"] += bool(result.note and result.note.startswith("Read "))
                shown_of[question] = [h.paper.title[:60] for h in cleared]
                if form == "What is {}?":
                    answer = asyncio.run(Agent(None).turn(ToolDeps(archive), [], question, _Quiet()))
                    counts["line"] += answer.lead is not None
                    counts["defines"] += answer.lead is not None and words.lower() in answer.lead.quote.lower()
            lines = (f"{counts['line']} | {counts['defines']}" if form == "What is {}?" else " | ")
            print(f"| {form.format('X')} | {len(names)} | {counts['shown']} | {counts['names']} | "
                  f"{counts['spellers']} | {counts['weak']} | {counts['read']} | {lines} |")
        if args.show:
            for question in random.Random(7).sample(sorted(shown_of), min(args.show, len(shown_of))):
                print(f"- {question}: {shown_of[question] or 'nothing'}")
    finally:
        settings.close()


if __name__ == "__main__":
    main()
