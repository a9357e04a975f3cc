"""The judged claims (tests/fixtures/judged_claims.jsonl, issue 71's ground truth, written before any check is
calibrated): the kinds and halves the set promises, and each claim's evidence standing word for word on its page of
the cited PDF as the product's parser reads it, so a checker given the passages of that page is given that text."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from ingest.pdf_worker import PdfWorker

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PDFS = Path(__file__).resolve().parents[2] / "data" / "demo" / "pdfs"
KINDS = ("faithful", "changed_number", "wrong_paper", "unsupported", "negation")


def _claims() -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / "judged_claims.jsonl").read_text(encoding="utf-8").splitlines()]


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_the_judged_claims_have_every_kind_in_two_fixed_halves():
    claims = _claims()
    assert len(claims) >= 150 and len({c["id"] for c in claims}) == len(claims)
    kinds = Counter(c["kind"] for c in claims)
    assert set(kinds) == set(KINDS) and kinds["faithful"] * 2 == len(claims), kinds
    assert all(c["faithful"] == (c["kind"] == "faithful") for c in claims)
    for kind in KINDS:  # each kind split in two halves that differ by one claim at most
        halves = Counter(c["half"] for c in claims if c["kind"] == kind)
        assert set(halves) == {"calibration", "held_out"} and abs(halves["calibration"] - halves["held_out"]) <= 1
    for c in claims:
        assert (c["cited"] != c["source"]) == (c["kind"] == "wrong_paper"), c["id"]
        assert _words(c["sentence"]).lower() not in _words(c["evidence"]).lower(), c["id"]  # paraphrased, not copied
    assert {c["source"] for c in claims} == {pdf.stem for pdf in PDFS.glob("*.pdf")}


def test_each_claims_evidence_stands_on_its_page_of_the_cited_pdf():
    claims = _claims()
    with PdfWorker() as worker:
        pages = {pdf.stem: [_words(t) for t in worker.extract(pdf.read_bytes())] for pdf in PDFS.glob("*.pdf")}
    for c in claims:
        assert _words(c["evidence"]) in pages[c["cited"]][c["page"] - 1], c["id"]
        assert 1 <= c["source_page"] <= len(pages[c["source"]]), c["id"]
