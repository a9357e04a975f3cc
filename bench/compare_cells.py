"""Comparison cells on the judged set: does the extractive cell pick the sentence a reader would (20 aspect questions
over six demo papers, `tests/fixtures/compare_judged.jsonl`, each with its expected sentence from the abstract)?

Run after `scholarloom ingest demo` (with the server stopped, the embedded index allows one process):
    .venv/bin/python -m bench.compare_cells [--data-dir data/local]

Prints the chosen weights' score, then the score with each part of the evidence switched off (meaning alone, no
cue words, no favour for the abstract, no abstract order), so the figure comes with what each part adds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from retrieval.search import compare
from retrieval.search.evaluation import judge_cells
from scholarloom.settings import Settings

JUDGED = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "compare_judged.jsonl"


def score(archive, **weights) -> tuple[int, list]:
    saved = {name: getattr(compare, name) for name in weights}
    for name, value in weights.items():
        setattr(compare, name, value)
    try:
        judged = judge_cells(archive, JUDGED)
    finally:
        for name, value in saved.items():
            setattr(compare, name, value)
    return sum(j.right for j in judged), judged


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    archive = settings.archive()
    no_favour = {"default": 0.0, "other": 0.0}
    rows = {
        "chosen (meaning + cues + abstract favoured + abstract order)": {},
        "meaning alone": {"CUE_WEIGHT": 0.0, "ABSTRACT_WEIGHT": no_favour, "POSITION_WEIGHT": 0.0},
        "without cue words": {"CUE_WEIGHT": 0.0},
        "without favouring the abstract": {"ABSTRACT_WEIGHT": no_favour},
        "without the abstract's order": {"POSITION_WEIGHT": 0.0},
    }
    print("| cell choice | expected sentence picked |")
    print("| --- | --- |")
    misses = []
    for name, weights in rows.items():
        right, judged = score(archive, **weights)
        print(f"| {name} | {right}/{len(judged)} |")
        if not weights:
            misses = [j for j in judged if not j.right]
    for j in misses:
        print(f"\nmissed {j.paper} {j.aspect!r}: picked {j.picked!r}")
    settings.close()


if __name__ == "__main__":
    main()
