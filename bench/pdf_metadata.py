"""Title and authors read from the PDF file itself (`ingest.pdf_meta`), against what the papers say they are.

    python -m bench.pdf_metadata [--layout-only]

The eight PDFs the repository ships: the demo's six (`data/demo/pdfs`, truth in its `metadata.jsonl`: arXiv's
record) and the tests' two ACL Anthology copies (`tests/fixtures/pdfs`, truth below: the title and byline as
printed on their first page). Each file goes through the real PDF worker, as an upload does. Titles count when
equal after folding case and spacing; authors are scored by F1 over names folded the same way (accents kept).
`--layout-only` ignores the document info, so the first page's layout alone is measured.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ingest.pdf_meta import guess_metadata
from ingest.pdf_worker import PdfWorker

ROOT = Path(__file__).resolve().parent.parent
DEMO_PDFS = ROOT / "data" / "demo" / "pdfs"
FIXTURE_PDFS = ROOT / "tests" / "fixtures" / "pdfs"
PRINTED = {  # as printed on the first page (ACL Anthology copies; no arXiv record applies to the file)
    "2020.acl-main.447.pdf": ("S2ORC: The Semantic Scholar Open Research Corpus",
                              ["Kyle Lo", "Lucy Lu Wang", "Mark Neumann", "Rodney Kinney", "Daniel S. Weld"]),
    "2023.eacl-main.121.pdf": ("LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization",
                               ["Kalpesh Krishna", "Erin Bransom", "Bailey Kuehl", "Mohit Iyyer", "Pradeep Dasigi",
                                "Arman Cohan", "Kyle Lo"]),
}  # fmt: skip


@dataclass(frozen=True)
class Scored:
    file: str
    title: str
    title_ok: bool
    authors: list[str]
    f1: float


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def f1(found: list[str], truth: list[str]) -> float:
    a, b = {fold(n) for n in found}, {fold(n) for n in truth}
    if not a or not b:
        return 0.0
    hit = len(a & b)
    return 0.0 if not hit else 2 * hit / (len(a) + len(b))


def truths() -> list[tuple[Path, str, list[str]]]:
    found = []
    for line in (DEMO_PDFS / "metadata.jsonl").read_text().splitlines():
        record = json.loads(line)
        found.append((DEMO_PDFS / f"{record['id']}.pdf", record["title"], record["authors"]))
    found += [(FIXTURE_PDFS / name, title, authors) for name, (title, authors) in PRINTED.items()]
    return found


def measure() -> dict[bool, list[Scored]]:
    """Each PDF read once by the worker, judged with its document info (False) and by its layout alone (True)."""
    scored: dict[bool, list[Scored]] = {False: [], True: []}
    with PdfWorker() as worker:
        for path, title, authors in truths():
            parsed = worker.read(path.read_bytes())
            for layout_only in (False, True):
                meta = guess_metadata({} if layout_only else parsed.info, parsed.lines, parsed.pages[0])
                scored[layout_only].append(Scored(path.name, meta.title, fold(meta.title) == fold(title),
                                                  meta.authors, f1(meta.authors, authors)))  # fmt: skip
    return scored


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layout-only", action="store_true", help="Ignore the PDF's document info.")
    args = parser.parse_args()
    scored = measure()[args.layout_only]
    for s in scored:
        print(f"{s.file:26} title {'ok ' if s.title_ok else 'NO '} author F1 {s.f1:.2f}  {s.title[:60]}")
    titles = sum(s.title_ok for s in scored)
    print(f"titles {titles}/{len(scored)}; author F1 mean {sum(s.f1 for s in scored) / len(scored):.3f}, "
          f"lowest {min(s.f1 for s in scored):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
