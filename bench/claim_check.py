"""The cited-sentence check (`retrieval.search.support`) on the judged claims (tests/fixtures/judged_claims.jsonl).

    SCHOLARLOOM_SHARED_MODELS_DIR=<prepared models> .venv/bin/python -m bench.claim_check [--calibrate] [--half held_out]
    SCHOLARLOOM_DATA_DIR=<a demo build> ... -m bench.claim_check --cost   # what checking one answer costs

Per kind on one half (the held-out one by default): how many the check calls "not found" (recall for the unfaithful
kinds, false alarms for the faithful ones) and the precision of "not found" overall. `--calibrate` prints, on the
calibration half only, the closeness threshold that keeps false alarms at most 0.1 and finds the most unfaithful
claims, to be written into `retrieval.search.support.CLOSE`. `--cost` measures what the chat's check of one answer
costs (`assistant.claim_check.check_reply`): for each of the load test's topics, the tools' results and the realistic
stand-in's answer from them (`harness.realistic`), checked cold (nothing of it encoded before) and warm (all of it
remembered, as when many readers ask about the same papers): sentences, texts encoded, CPU and wall milliseconds.
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


def cost(topics: list[str]) -> list[dict]:
    """The check of one realistic answer per topic, cold then warm (see the module's text)."""
    import asyncio
    import time

    from assistant.claim_check import check_reply
    from assistant.composer import cited_numbers, evidence_of, shown_in
    from assistant.tools import TOOLS_BY_NAME, ToolDeps, call_tool
    from assistant.turn import merge_cards
    from harness.realistic import write_answer
    from scholarloom.settings import Settings

    archive = Settings().archive()
    dense, encoded = archive.embedder.dense, [0]

    def counted(texts, batch_size=None):
        encoded[0] += len(texts)
        return dense(texts, batch_size)

    archive.embedder.dense = counted
    rows = []
    for topic in topics:
        deps, outputs, cards, shown = ToolDeps(archive, user="bench"), [], [], []
        plan = [("search_papers", {"query": topic, "limit": 5}), ("get_paper", None),
                ("search_fulltext", {"query": topic, "limit": 4})]  # fmt: skip
        for name, arguments in plan:
            if arguments is None:  # the realistic stand-in reads the best paper found
                if not cards:
                    continue
                arguments = {"paper_id": cards[0].id}
            result = call_tool(TOOLS_BY_NAME[name], deps, arguments)
            deps, cards, shown = deps.after(result), merge_cards(cards, result.cards), shown + list(shown_in(result))
            outputs.append(result.output)
        text = write_answer("", topic, "\n".join(outputs))
        evidence = evidence_of(cards, cited_numbers(text), shown=shown)
        for state in ("cold", "warm"):
            encoded[0], cpu, wall = 0, time.process_time(), time.perf_counter()
            marks = asyncio.run(check_reply(deps, text, evidence))
            rows.append({"topic": topic, "state": state, "sentences": len(marks), "found": sum(m.found for m in marks),
                         "encoded": encoded[0], "cpu_ms": round(1000 * (time.process_time() - cpu)),
                         "wall_ms": round(1000 * (time.perf_counter() - wall))})  # fmt: skip
    return rows


def main() -> None:
    from scholarloom.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="held_out", choices=("held_out", "calibration"))
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--cost", action="store_true", help="what checking one realistic answer costs, cold and warm")
    args = parser.parse_args()
    if args.cost:
        from harness.load_clients import TOPICS

        for row in cost(TOPICS):
            print(json.dumps(row))
        return
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
