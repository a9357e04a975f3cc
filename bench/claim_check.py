"""The cited-sentence check (`retrieval.search.support`) on the judged claims (tests/fixtures/judged_claims.jsonl).

    SCHOLARLOOM_SHARED_MODELS_DIR=<prepared models> .venv/bin/python -m bench.claim_check [--calibrate] [--half held_out]

Per kind on one half (the held-out one by default): how many the check calls "not found" (recall for the unfaithful
kinds, false alarms for the faithful ones) and the precision of "not found" overall. `--calibrate` prints, on the
calibration half only, the closeness threshold that keeps false alarms at most 0.1 and finds the most unfaithful
claims, to be written into `retrieval.search.support.CLOSE`.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from retrieval.search import support

JUDGED = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "judged_claims.jsonl"
KINDS = ("faithful", "changed_number", "wrong_paper", "unsupported", "negation")


def load(half: str | None = None) -> list[dict]:
    claims = [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines()]
    return [c for c in claims if half is None or c["half"] == half]


PAPERS = JUDGED.parents[2] / "data" / "demo" / "pdfs" / "metadata.jsonl"


def verdicts(claims: list[dict], encode) -> list[support.Verdict]:
    """Each claim against its evidence, with the cited paper's title and abstract as the chat holds them."""
    papers = {p["id"]: p for p in map(json.loads, PAPERS.read_text(encoding="utf-8").splitlines())}
    return [support.check_sentence(c["sentence"], [c["evidence"]], encode,
                              f"{papers[c['cited']]['title']}. {papers[c['cited']]['abstract']}") for c in claims]


def summary(claims: list[dict], found: list[bool]) -> dict:
    flagged = Counter(c["kind"] for c, f in zip(claims, found) if not f)
    total = Counter(c["kind"] for c in claims)
    rates = {kind: round(flagged[kind] / total[kind], 3) for kind in KINDS if total[kind]}
    wrong = sum(flagged[k] for k in KINDS if k != "faithful")
    said = sum(flagged.values())
    return {"not_found_rate": rates, "false_alarms": rates.get("faithful"),
            "precision_of_not_found": round(wrong / said, 3) if said else None, "claims": len(claims)}


def calibrate(claims: list[dict], results: list[support.Verdict], most_false_alarms: float = 0.1) -> dict:
    """The pair of thresholds (`CLOSE`, `CLOSE_WITHOUT_A_NAME`) that flags the most unfaithful claims of this half
    with at most `most_false_alarms` of its faithful ones flagged."""
    best = None
    for low in range(30, 90):
        for high in range(low, 100):
            found = [not [m for m in v.missing if _is_figure(m)]
                     and v.closeness >= (high if any(not _is_figure(m) for m in v.missing) else low) / 100
                     for v in results]  # fmt: skip
            figures = summary(claims, found)
            if figures["false_alarms"] is not None and figures["false_alarms"] <= most_false_alarms:
                caught = sum(1 for c, f in zip(claims, found) if not f and c["kind"] != "faithful")
                if best is None or caught > best[1]:
                    best = ((low / 100, high / 100), caught, figures)
    return {"thresholds": best[0], **best[2]} if best else {}


def _is_figure(missing: str) -> bool:
    return missing.replace(".", "", 1).isdigit()


def main() -> None:
    from scholarloom.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="held_out", choices=("held_out", "calibration"))
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    embedder = Settings().embedder()
    claims = load("calibration" if args.calibrate else args.half)
    results = verdicts(claims, embedder.dense)
    if args.calibrate:
        print(json.dumps(calibrate(claims, results), indent=1))
        return
    print(json.dumps({"half": args.half, "thresholds": [support.CLOSE, support.CLOSE_WITHOUT_A_NAME],
                      **summary(claims, [v.found for v in results])}, indent=1))


if __name__ == "__main__":
    main()
