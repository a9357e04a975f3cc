"""Finding institutions: the resolver is kept per catalog and built again after any write to institutions, from
this process or another, so an alias merged later is found at once."""

from retrieval.scholarly.affiliations import MatchedBy
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.institutions import find_institution
from retrieval.scholarly.records import InstitutionRecord
from retrieval.scholarly.upsert import upsert_institution

MARKER = InstitutionRecord(name="Marker Institute of Cartography", ror_id="0abcdef12", country_code="NZ", source="t")


def _write(catalog: Catalog, record: InstitutionRecord) -> None:
    with catalog.session() as session:
        upsert_institution(session, record)
        session.commit()


def test_an_alias_merged_later_is_found_at_once_even_from_another_process(tmp_path):
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    server, ingest = Catalog(url), Catalog(url)  # two processes on one catalog
    _write(ingest, MARKER)
    assert find_institution(server, "Marker Institute of Cartography").how is MatchedBy.EXACT
    assert find_institution(server, "Kartografie Zentrum Wellington").institution is None  # unknown alias
    kept = server.cached("institutions", lambda _session: object())
    assert server.cached("institutions", lambda _session: object()) is kept  # nothing written: the same resolver

    _write(ingest, MARKER.model_copy(update={"aliases": ["Kartografie Zentrum Wellington"], "acronyms": ["MIC"]}))
    found = find_institution(server, "Kartografie Zentrum Wellington")
    assert found.institution is not None and found.institution.ror_id == "0abcdef12" and found.how.certain
    assert find_institution(server, "MIC").how is MatchedBy.ACRONYM
    server.close()
    ingest.close()


def test_a_large_institutions_pages_are_the_same_walked_or_gathered(tmp_path, monkeypatch):
    """A page of an institution holding most of the archive's papers is found by walking the newest-first index
    and testing each paper (`paging._walk_is_shorter`); the pages, deep ones and one category's, are those that
    gathering and sorting its ids gives, and its members are counted from the authorships."""
    from datetime import datetime, timezone

    from ingest.pipeline import load_records
    from ingest.report import Summary
    from retrieval.scholarly import paging
    from retrieval.scholarly.institutions import institution_profile
    from retrieval.scholarly.records import AffiliationRecord, AuthorRecord, PaperRecord

    place = AffiliationRecord(raw="Marker Institute", name="Marker Institute", ror_id="0abcdef12")
    records = []
    for n in range(40):
        authors = [AuthorRecord(name=f"Author {n % 7}", affiliations=[place] if n % 5 else [])]
        records.append(PaperRecord(
            id=f"2101.{n:05d}", arxiv_id=f"2101.{n:05d}", title=f"Paper {n}", abstract="Words.", authors=authors,
            categories=["cs.CL" if n % 3 else "math.CO"], primary_category="cs.CL" if n % 3 else "math.CO",
            published=datetime(2021, 1, 1 + n % 28, tzinfo=timezone.utc) if n % 11 else None, source="t",
        ))  # fmt: skip
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    load_records(catalog, "t", records, Summary())
    institution = find_institution(catalog, "0abcdef12").institution
    walked = []
    monkeypatch.setattr(paging, "_walk_is_shorter", lambda *args: walked.append(args) or True)
    pages = {(page, category): institution_profile(catalog, institution.id, page, category, per_page=5)
             for page in range(1, 8) for category in (None, "math.CO")}  # fmt: skip
    assert walked
    monkeypatch.setattr(paging, "_walk_is_shorter", lambda *args: False)
    for (page, category), profile in pages.items():
        gathered = institution_profile(catalog, institution.id, page, category, per_page=5)
        assert [p.id for p in profile.papers.papers] == [p.id for p in gathered.papers.papers], (page, category)
        assert profile.papers.total == gathered.papers.total
    whole = institution_profile(catalog, institution.id, per_page=5)
    assert whole.paper_count == whole.papers.total == 32  # every paper but each fifth
    assert whole.researcher_count == 7 and sum(m.papers for m in whole.researchers) == 32
    assert [p.id for p in whole.papers.papers][0] == "2101.00027"  # the newest (day 28)
    monkeypatch.undo()
    with catalog.session() as session:  # the first 5 of 32 among 40 papers are met sooner walking; the last not
        assert paging._walk_is_shorter(session, 32, 5, None) and not paging._walk_is_shorter(session, 32, 32, None)
        assert not paging._walk_is_shorter(session, 3, 5, "math.CO")  # 5 of 3 among 14
    assert institution_profile(catalog, institution.id, per_page=5).papers.papers[0].id == "2101.00027"
