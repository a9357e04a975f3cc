"""Reference lists split and parsed (`ingest.references`), against entries judged by hand.

    python -m bench.references [--show]

The judged entries (`tests/fixtures/judged_references.jsonl`) are every entry of three of the demo's PDFs' reference
lists (TripPy 2005.02877, FED 2006.12719, the Semantic Scholar literature graph 1805.02262: 81 entries), each with
its first author's surname, year and title as a reader of the printed list writes them (words broken across lines
joined, accents as printed). Each file goes through the real PDF worker, as an upload does.

- split right: the list gives exactly one entry with that first author and year, and as many entries as judged;
- title right: that entry's title equals the judged one after folding case, accents, spaces and punctuation.

The other three demo PDFs (ELMo, SPECTER, the dialog-evaluation survey) are parsed too and their counts printed,
unjudged: a look at what the parser does on lists it was not judged on.
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from collections import defaultdict
from pathlib import Path

from ingest.pdf_worker import PdfWorker
from ingest.references import Reference

ROOT = Path(__file__).resolve().parent.parent
PDFS = ROOT / "data" / "demo" / "pdfs"
JUDGED = ROOT / "tests" / "fixtures" / "judged_references.jsonl"


def folded(text: str) -> str:
    """Lower case letters and digits only, accents and pypdf's detached accent marks dropped."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text.lower() if c.isalnum() and unicodedata.category(c) not in ("Mn", "Lm", "Sk"))


def judge(parsed: list[Reference], judged: list[dict]) -> list[dict]:
    """Each judged entry with whether it was split right and its title read right."""
    rows = []
    for item in judged:
        surname = folded(item["first_author"])
        same = [r for r in parsed if r.year == item["year"] and r.authors and folded(r.authors[0]).endswith(surname)]
        split = len(same) == 1 and len(parsed) == len(judged)
        title = len(same) == 1 and folded(same[0].title or "") == folded(item["title"])
        rows.append({**item, "split": split, "title right": title, "read": same[0].title if len(same) == 1 else None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each judged entry that is wrong")
    args = parser.parse_args()
    judged: dict[str, list[dict]] = defaultdict(list)
    for line in JUDGED.read_text().splitlines():
        item = json.loads(line)
        judged[item["paper"]].append(item)
    rows = []
    print("| paper | entries judged | entries read | split right | title right |")
    print("| --- | --- | --- | --- | --- |")
    with PdfWorker() as worker:
        for pdf in sorted(PDFS.glob("*.pdf")):
            parsed = worker.read(pdf.read_bytes()).references
            mine = judge(parsed, judged.get(pdf.stem, []))
            rows += mine
            if mine:
                print(f"| {pdf.stem} | {len(mine)} | {len(parsed)} | {sum(r['split'] for r in mine)} | "
                      f"{sum(r['title right'] for r in mine)} |")  # fmt: skip
            else:
                print(f"| {pdf.stem} (not judged) | | {len(parsed)} | | |")
    print(f"| all judged | {len(rows)} | | {sum(r['split'] for r in rows) / len(rows):.3f} | "
          f"{sum(r['title right'] for r in rows) / len(rows):.3f} |")  # fmt: skip
    if args.show:
        for row in rows:
            if not (row["split"] and row["title right"]):
                print(f"{row['paper']} #{row['n']} {row['first_author']} {row['year']}: judged {row['title']!r}, "
                      f"read {row['read']!r}")  # fmt: skip


if __name__ == "__main__":
    main()
