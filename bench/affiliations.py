"""Affiliation resolution on ROR's gold sets, against the ROR sample the demo corpus ships.

    .venv/bin/python -m bench.affiliations ../shared/data/ror/affiliation_gold [--ror data/demo/ror/ror_v2_records_sample.jsonl]

- names set (`dataset_names.json`): top-1 accuracy over the pairs whose ROR id is in the sample (the
  resolver always answers);
- crossref set (`dataset_affiliations_crossref_*.json`): the resolver may abstain. Items whose ids are all
  outside the sample are left out (and counted); items with no id expect no answer. The set is split in
  two halves with a fixed seed: the abstain threshold is chosen on the first half (the lowest threshold
  whose precision there is >= 0.98, one point above the 0.97 aimed at, for the first half's estimate is
  itself uncertain by about half a point; else the best F1), and precision, recall and the share of "no match" items
  correctly left unanswered are reported on the second half (and, for reference, on the whole set).
Precision = right answers / answers given; recall = right answers / items that have an id in the sample.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.parsers.ror import parse_ror_lines  # noqa: E402
from retrieval.scholarly.affiliations import AffiliationResolver  # noqa: E402
from retrieval.scholarly.records import InstitutionRecord  # noqa: E402

TARGET_PRECISION = 0.97
MARGIN = 0.01


def short(ror: str) -> str:
    return ror.rstrip("/").rsplit("/", 1)[-1]


def load_resolver(path: Path) -> AffiliationResolver:
    with path.open(encoding="utf-8") as handle:
        records = [r for r in parse_ror_lines(handle) if isinstance(r, InstitutionRecord)]
    return AffiliationResolver.from_records(records)


def names_accuracy(resolver: AffiliationResolver, items: list[dict], known: set[str]):
    kept = [(i["affiliation"], short(i["ror-id"])) for i in items if short(i["ror-id"]) in known]
    right, misses = 0, []
    for text, gold in kept:
        found = resolver.best(text)
        if found and found.id == gold:
            right += 1
        else:
            misses.append((text, gold, found.name if found else None))
    return right / len(kept), len(kept), len(items) - len(kept), misses


def crossref_scores(predictions: list[tuple[set[str], str | None, float]], threshold: float):
    answered = [(gold, pred) for gold, pred, score in predictions if pred is not None and score >= threshold]
    right = sum(1 for gold, pred in answered if pred in gold)
    positives = sum(1 for gold, _p, _s in predictions if gold)
    negatives = [(gold, pred, score) for gold, pred, score in predictions if not gold]
    abstained = sum(1 for _g, pred, score in negatives if pred is None or score < threshold)
    precision = right / len(answered) if answered else 1.0
    recall = right / positives if positives else 0.0
    return precision, recall, abstained / len(negatives) if negatives else 1.0


def choose_threshold(predictions) -> float:
    grid = [x / 100 for x in range(40, 100)]
    passing = [t for t in grid if crossref_scores(predictions, t)[0] >= TARGET_PRECISION + MARGIN]
    if passing:
        return min(passing)

    def f1(t):
        p, r, _ = crossref_scores(predictions, t)
        return 2 * p * r / (p + r) if p + r else 0

    return max(grid, key=f1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("gold_dir", type=Path)
    parser.add_argument("--ror", type=Path, default=ROOT / "data" / "demo" / "ror" / "ror_v2_records_sample.jsonl")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show-misses", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    resolver = load_resolver(args.ror)
    known = {str(i.id) for i in resolver.institutions}
    print(f"ROR sample: {len(known)} institutions ({time.perf_counter() - started:.1f} s to build the resolver)")

    names = json.loads((args.gold_dir / "dataset_names.json").read_text())
    accuracy, kept, left, misses = names_accuracy(resolver, names, known)
    print(f"names: top-1 accuracy {accuracy:.4f} over {kept} pairs ({left} left out: id not in the sample)")
    for miss in misses[: args.show_misses]:
        print("  miss:", miss)

    crossref_file = next(args.gold_dir.glob("dataset_affiliations_crossref_*.json"))
    items = json.loads(crossref_file.read_text())
    usable, left_out = [], 0
    for item in items:
        gold = {short(r) for r in item["ror_ids"]}
        if gold and not gold & known:
            left_out += 1
            continue
        usable.append((item["affiliation"], gold & known))
    random.Random(args.seed).shuffle(usable)
    started = time.perf_counter()
    predictions = []
    for text, gold in usable:
        found = resolver.best(text)
        predictions.append((gold, str(found.id) if found else None, found.score if found else 0.0))
    seconds = time.perf_counter() - started
    half = len(predictions) // 2
    threshold = choose_threshold(predictions[:half])
    p, r, a = crossref_scores(predictions[half:], threshold)
    pa, ra, aa = crossref_scores(predictions, threshold)
    print(
        f"crossref: {len(usable)} items ({sum(1 for _t, g in usable if not g)} expect no match; {left_out} left out: "
        f"ids not in the sample); threshold {threshold:.2f} chosen on the first half"
    )
    print(f"  second half: precision {p:.4f}, recall {r:.4f}, no-match items left unanswered {a:.4f}")
    print(f"  whole set:   precision {pa:.4f}, recall {ra:.4f}, no-match items left unanswered {aa:.4f}")
    print(f"  {1000 * seconds / len(usable):.2f} ms per string")
    print("  threshold  precision/recall, first half  |  second half")
    for t in (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        (p1, r1, _), (p2, r2, _) = crossref_scores(predictions[:half], t), crossref_scores(predictions[half:], t)
        print(f"  {t:.2f}       {p1:.4f} / {r1:.4f}              |  {p2:.4f} / {r2:.4f}")
    if args.show_misses:  # from the first half: the second is kept for scoring
        for (text, _gold), (g, pred, score) in list(zip(usable, predictions, strict=True))[:half]:
            if g and pred not in g and args.show_misses > 0:
                args.show_misses -= 1
                print(f"  crossref miss ({score:.2f}): {text!r} gold {sorted(g)} got {pred}")


if __name__ == "__main__":
    main()
