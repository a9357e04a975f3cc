""""Who wrote X?" in the retrieval-only chat: does it lead with the authors of the paper that named X, and only then?

    .venv/bin/python -m bench.who_wrote --data-dir /tmp/demo [--show]

Three groups of names, each asked as "Who wrote X?" (`assistant.retrieval_only`, one turn each, no conversation):
- "titled": every paper whose title begins with a one-word name and a colon ("TinyBERT: ...", as `bench.named_papers`
  reads them); its authors are the answer;
- "named in its text": names a paper's abstract or full text says it named ("we call them ELMo", "We propose
  SPECTER", "It also introduces the FED dataset": `names_its_own`), introduced with a comma, bracket or colon after
  them, and no title leads with; that paper's authors are the answer;
- "built on": well-known names the demo's papers use but did not make (BERT, DialoGPT, MultiWOZ, ...): no paper of
  the demo is theirs, so no "Written by" line is right.

Per group: how often the answer leads with the expected paper's authors, with another paper's, or with none.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from assistant.agent import Agent
from assistant.tools import ToolDeps
from bench.named_papers import named
from bench.retrieval_only_time import _Quiet
from retrieval.search import relevance
from scholarloom.settings import Settings

# Names the demo's papers build on or mention, none of which is a demo paper's own (checked by hand on the demo)
BUILT_ON = ("BERT", "DialoGPT", "MultiWOZ", "word2vec", "ResNet", "LSTM", "GPT-2", "CoVe", "SQuAD", "SNLI",
            "ImageNet", "Adam", "WordPiece", "SciBERT-base", "ROUGE", "BLEU", "PageRank", "Wikipedia", "Word2Vec",
            "RoBERTa", "ChatGPT", "GPT-4", "PyTorch", "TensorFlow", "FAISS", "Lucene", "Elasticsearch",
            "arXiv")  # fmt: skip


def own_names(archive, titled: set[str]) -> list[tuple[str, str]]:
    """(paper id, name) for the coined names the papers' abstracts say they named (`names_its_own`), not titled."""
    from sqlmodel import select

    from retrieval.scholarly.models import Paper
    from retrieval.search.relevance import coined_terms

    found = []
    with archive.catalog.session() as session:
        rows = session.exec(select(Paper.id, Paper.abstract).where(Paper.abstract != "")).all()
    for pid, abstract in rows:
        text = " ".join((abstract or "").split())
        for match in relevance._NAMING.finditer(text):
            for word in text[match.end() : match.end() + 200].split()[: relevance._NAMED_WITHIN]:
                bare = word.rstrip(",:(")  # a name introduced: "We propose SPECTER, a ...", "SCOOD (...)", "X:"
                if bare == word or not coined_terms(bare) or not bare.replace("-", "").isalnum():
                    continue
                if bare.lower() not in titled and relevance.names_its_own(text, bare.lower()):
                    found.append((pid, bare))
                    break
    return list(dict.fromkeys(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--show", action="store_true", help="also list each question not answered as expected")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    try:
        archive = settings.archive()
        titled = named(archive)
        groups = {"titled": titled,
                  "named in its text": own_names(archive, {n.lower() for _, n in titled}),
                  "built on": [(None, n) for n in BUILT_ON]}  # fmt: skip

        async def ask(question: str) -> str | None:
            answer = await Agent(None).turn(ToolDeps(archive), [], question, _Quiet())
            return answer.cards[0].id if "**Written by**" in answer.text else None  # (the line is of the first card)

        print("| names | questions | its authors first | another paper's authors | no authors line |")
        print("| --- | --- | --- | --- | --- |")
        odd = []
        for label, group in groups.items():
            right = wrong = none = 0
            for pid, name in group:
                said = asyncio.run(ask(f"Who wrote {name}?"))
                right += said is not None and said == pid
                wrong += said is not None and said != pid
                none += said is None
                if said != pid:
                    odd.append(f"{label}: Who wrote {name}? expected {pid}, said {said}")
            print(f"| {label} | {len(group)} | {right} | {wrong} | {none} |")
        if args.show:
            print("", *odd, sep="\n")
    finally:
        settings.close()


if __name__ == "__main__":
    main()
