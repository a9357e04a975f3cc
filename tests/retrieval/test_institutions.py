"""Finding institutions: the resolver is kept per catalog and built again after any write to institutions, from
this process or another, so an alias merged later is found at once."""

from retrieval.scholarly.affiliations import MatchedBy
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.institutions import look_up_institution as find_institution
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


def test_an_institutions_pages_and_fields_follow_its_authorships_and_papers_as_they_change(tmp_path):
    """An institution's page is read from its kept papers (`InstitutionPaper`): every page, deep ones and one
    category's, and its fields are those its authorships and papers give when read the long way, after a new version
    moves a paper's date and category, and after a new version drops the institution from a paper; `Catalog.recount`
    makes the same rows from scratch."""
    from datetime import datetime, timezone

    from sqlmodel import select

    from ingest.pipeline import load_records
    from ingest.report import Summary
    from retrieval.scholarly.institutions import institution_profile
    from retrieval.scholarly.models import Authorship, InstitutionPaper
    from retrieval.scholarly.paging import fields_of, page_of_papers
    from retrieval.scholarly.records import AffiliationRecord, AuthorRecord, PaperRecord

    place = AffiliationRecord(raw="Marker Institute", name="Marker Institute", ror_id="0abcdef12")

    def paper(n: int, category: str | None = None, day: int | None = None, others: bool = False) -> PaperRecord:
        """Paper n (every fifth not at the institution); `others`: by two other authors, neither there."""
        here = bool(n % 5) and not others
        category = category or ("cs.CL" if n % 3 else "math.CO")
        published = datetime(2021, 1, day or 1 + n % 28, tzinfo=timezone.utc) if n % 11 else None
        name = "Other" if others else "Author"
        authors = [AuthorRecord(name=f"{name} {n % 7}", affiliations=[place] if here else []),
                   AuthorRecord(name=f"{name} {(n + 1) % 7}", affiliations=[place] if here and n % 2 else [])]
        return PaperRecord(id=f"2101.{n:05d}", arxiv_id=f"2101.{n:05d}", title=f"Paper {n}", abstract="Words.",
                           authors=authors, categories=[category], primary_category=category, published=published,
                           year=2021, source="arxiv")  # fmt: skip

    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    load_records(catalog, "arxiv", [paper(n) for n in range(40)], Summary())
    institution = find_institution(catalog, "0abcdef12").institution

    def agree(papers_here: int) -> list:
        with catalog.session() as session:
            own = select(Authorship.paper_id).where(Authorship.institution_id == institution.id)
            for category in (None, "math.CO", "cs.CL", "q-bio.NC"):
                for page in range(1, 9):
                    shown = institution_profile(catalog, institution.id, page, category, per_page=5)
                    long_way = page_of_papers(session, own, page, 5, category)
                    assert [p.id for p in shown.papers.papers] == [p.id for p in long_way.papers], (page, category)
                    assert (shown.papers.total, shown.papers.pages) == (long_way.total, long_way.pages)
            whole = institution_profile(catalog, institution.id, per_page=5)
            assert whole.paper_count == whole.papers.total == papers_here
            assert whole.fields == fields_of(session, own)
            members = {}  # the long way: each member's papers here, most first, ties by the first known
            for researcher, paper_id in session.exec(select(Authorship.researcher_id, Authorship.paper_id)
                                                     .where(Authorship.institution_id == institution.id)):  # fmt: skip
                members.setdefault(researcher, set()).add(paper_id)
            assert [(m.researcher_id, m.papers) for m in whole.researchers] == sorted(
                ((r, len(p)) for r, p in members.items()), key=lambda m: (-m[1], m[0]))
            assert whole.researcher_count == len(members)
            return sorted(session.exec(select(InstitutionPaper.institution_id, InstitutionPaper.paper_id,
                                              InstitutionPaper.published, InstitutionPaper.primary_category)))

    agree(32)  # every paper but each fifth
    first = institution_profile(catalog, institution.id, per_page=5)
    assert first.papers.papers[0].id == "2101.00027"  # the newest (day 28)
    assert first.fields == [("cs.CL", 21), ("math.CO", 11)]
    # A new version: paper 1 moves to q-bio.NC and to the newest date; paper 2's authors are others, not there.
    load_records(catalog, "arxiv", [paper(1, "q-bio.NC", day=30), paper(2, others=True)], Summary())
    kept = agree(31)
    moved = institution_profile(catalog, institution.id, per_page=5)
    assert moved.papers.papers[0].id == "2101.00001" and ("q-bio.NC", 1) in moved.fields
    assert "2101.00002" not in {row[1] for row in kept}
    catalog.recount()
    assert agree(31) == kept
    catalog.close()
