"""The affiliation resolver on raw strings, against the ROR sample the demo corpus ships."""

from __future__ import annotations

import pytest

from ingest.demo import DEMO_DIR
from ingest.parsers.ror import parse_ror_lines
from retrieval.scholarly.affiliation_text import pieces, words
from retrieval.scholarly.affiliations import AffiliationResolver
from retrieval.scholarly.records import InstitutionRecord


@pytest.fixture(scope="module")
def resolver() -> AffiliationResolver:
    with (DEMO_DIR / "ror" / "ror_v2_records_sample.jsonl").open(encoding="utf-8") as handle:
        return AffiliationResolver.from_records(r for r in parse_ror_lines(handle) if isinstance(r, InstitutionRecord))


@pytest.mark.parametrize(
    "text, ror",
    [
        ("MIT", "042nb2s44"),
        ("Massachusetts Institute of Technology", "042nb2s44"),
        ("Dept. of EECS, Univ. of California, Berkeley, CA 94720, USA", "01an7q238"),
        ("University of California, Davis", "05rrcem69"),  # not the University of California system
        ("Stanfrod University", "00f54p054"),  # one letter swapped
        ("ManagementUniversity of CaliforniaBerkeleyCA 94720USA", "01an7q238"),  # glued
        ("Google", "00njsd438"),  # the United States parent, not a country branch
        ("Kings College London, Strand, London, UK", "0220mzb33"),
    ],
)
def test_resolves(resolver, text, ror):
    assert resolver.best(text).id == ror


def test_a_place_alone_is_not_an_institution(resolver):
    found = resolver.best("Boston, MA, USA")
    assert found is None or found.score < 0.75
    usa = resolver.best("USA")
    assert usa is None or usa.name != "United States Army"


def test_normalisation():
    assert words("Univ. of Würzburg &amp; Dept. of Physics") == ["university", "wurzburg", "department", "physics"]
    assert pieces("A, B; C\nD") == ["A", "B", "C", "D"]


def test_closest_without_a_word_in_common(resolver):
    assert resolver.resolve("Nowhere Studies Atlantis") == [] or resolver.best("Nowhere Studies Atlantis").score < 0.75
    assert "00f54p054" in [m.id for m in resolver.closest("Stanfordd", limit=3)]
