"""A reference finds the held paper it names: by its ids first, then, with no arXiv id, by its title and year; and
the edge is linked whichever side arrives first (`retrieval.scholarly.citation_edges.resolve_citation_edges`, `link_cited`).
Near-titles, ambiguous titles, far-off years and another paper's arXiv id never match."""

import pytest
from sqlmodel import select

from ingest.pipeline import load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.citation_edges import ListedWork, add_citation, edges_of, resolve_citation_edges
from retrieval.scholarly.models import Citation, title_key
from retrieval.scholarly.records import AuthorRecord, PaperRecord

CITING = "2301.00001"
TRIPPY = "TripPy: A Triple Copy Strategy for Value Independent Neural Dialog State Tracking"


@pytest.fixture
def catalog(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    yield catalog
    catalog.close()


def _paper(arxiv_id: str, title: str, year: int = 2020, doi: str | None = None) -> PaperRecord:
    return PaperRecord(id=arxiv_id, arxiv_id=arxiv_id, title=title, year=year, doi=doi, source="arxiv_api",
                       authors=[AuthorRecord(name="Ada Lovelace")])  # fmt: skip


def _cite(catalog: Catalog, title: str, year: int | None = 2020, arxiv_id=None, doi=None) -> None:
    """An entry of CITING's own reference list, as the PDF step stores it."""
    with catalog.session() as session:
        edges = edges_of(session, CITING)
        add_citation(session, CITING, arxiv_id=arxiv_id, doi=doi, edges=edges, title=title,
                     entry=ListedWork(["Michael Heck"], year, "SIGDIAL", f"Heck et al. {title}. {year}"))  # fmt: skip
        session.flush()
        resolve_citation_edges(session, [CITING])
        session.commit()


def _linked(catalog: Catalog) -> list[str | None]:
    with catalog.session() as session:
        return [row.cited_id for row in session.exec(select(Citation).where(Citation.citing_id == CITING))]


@pytest.fixture
def citing(catalog):
    load_records(catalog, "arxiv_api", [_paper(CITING, "A paper whose reference list we read")], Summary())
    return catalog


def test_title_keys_fold_what_printers_change_and_refuse_what_is_too_short():
    assert title_key(TRIPPY) == title_key("Trippy - a triple copy strategy for value independent neural dialog "
                                          "state tracking.")  # fmt: skip
    assert title_key("Écoles in ﬁeld theory: a survey") == "ecoles in field theory a survey"
    assert title_key("Attention is not all you need") != title_key("Attention is all you need")
    assert title_key("Introduction") is None and title_key("Deep learning") is None and title_key(None) is None


def test_a_held_paper_is_found_by_its_title_when_the_list_gives_no_id(citing):
    load_records(citing, "arxiv_api", [_paper("2005.02877", TRIPPY)], Summary())
    _cite(citing, "TripPy: a triple copy strategy for value independent neural dialog state tracking")
    assert _linked(citing) == ["2005.02877"]


def test_the_edge_links_when_the_cited_paper_arrives_after_the_citing_one(citing):
    _cite(citing, TRIPPY)
    assert _linked(citing) == [None]
    load_records(citing, "arxiv_api", [_paper("2005.02877", TRIPPY)], Summary())
    assert _linked(citing) == ["2005.02877"]  # at once: no finish, no scan of every edge


def test_a_near_title_of_another_paper_is_not_matched(citing):
    load_records(citing, "arxiv_api", [_paper("1706.00001", "Attention is not all you need")], Summary())
    _cite(citing, "Attention is all you need", 2017)
    load_records(citing, "arxiv_api", [_paper("1706.00002", "Attention is all you need, again")], Summary())
    assert _linked(citing) == [None]


def test_a_title_held_twice_matches_neither(citing):
    load_records(citing, "arxiv_api", [_paper("2001.00001", "A survey of dialogue state tracking"),
                                       _paper("2001.00002", "A Survey of Dialogue State Tracking")], Summary())
    _cite(citing, "A survey of dialogue state tracking")
    assert _linked(citing) == [None]


def test_a_year_far_from_the_papers_is_not_matched(citing):
    _cite(citing, "Neural networks for dialogue state tracking", 2009)
    load_records(citing, "arxiv_api", [_paper("2001.00003", "Neural networks for dialogue state tracking")], Summary())
    assert _linked(citing) == [None]  # a 2009 work of the same name is another work
    _cite(citing, "Neural networks for dialogue state tracking", 2021)  # a preprint cited as published a year on
    assert _linked(citing) == [None, "2001.00003"]


def test_an_arxiv_id_is_never_overruled_by_a_title(citing):
    load_records(citing, "arxiv_api", [_paper("2005.02877", TRIPPY)], Summary())
    _cite(citing, TRIPPY, arxiv_id="2005.09999")  # the list says another id: that paper, not this one
    assert _linked(citing) == [None]


def test_a_doi_not_held_falls_back_to_the_title(citing):
    """A journal's DOI for a work held as its arXiv preprint: the DOI finds nothing, the title and year do."""
    _cite(citing, TRIPPY, 2020, doi="10.18653/V1/2020.SIGDIAL-1.4")
    load_records(citing, "arxiv_api", [_paper("2005.02877", TRIPPY)], Summary())
    assert _linked(citing) == ["2005.02877"]
    with citing.session() as session:  # and the DOI is kept as DOIs are compared
        assert session.exec(select(Citation.cited_doi)).first() == "10.18653/v1/2020.sigdial-1.4"


def test_a_doi_links_whichever_side_arrives_first(citing):
    _cite(citing, "Some title nobody else has at all", doi="10.1000/ABC")
    load_records(citing, "arxiv_api", [_paper("2002.00001", "Another title entirely here", doi="10.1000/abc")],
                 Summary())  # fmt: skip
    assert _linked(citing) == ["2002.00001"]


def test_a_held_papers_doi_in_capitals_is_found_by_a_reference_in_lower_case(citing):
    """The paper's record keeps its DOI as the source wrote it (capitals); the reference list's is kept in lower
    case: they are compared in lower case (through the papers' `lower(doi)` index)."""
    load_records(citing, "arxiv_api", [_paper("2002.00002", "A held paper whose DOI has capitals", doi="10.18653/V1/"
                                              "N18-3011")], Summary())  # fmt: skip
    _cite(citing, "A title printed quite differently in the list", doi="10.18653/v1/n18-3011")
    assert _linked(citing) == ["2002.00002"]
    assert citing.paper_by_doi("10.18653/v1/N18-3011") == "2002.00002"


def test_an_archive_from_before_revision_0009_gets_its_keys_and_its_edges_matched(tmp_path):
    """The revision fills the title keys of rows already stored and asks the next finish to read every unlinked
    edge again: an entry stored before titles matched finds its paper."""
    import sqlite3
    from contextlib import closing

    from ingest.pipeline import finish_catalog

    path = tmp_path / "old.db"
    catalog = Catalog(f"sqlite:///{path}")
    load_records(catalog, "arxiv_api", [_paper(CITING, "A paper whose reference list we read"),
                                        _paper("2005.02877", TRIPPY)], Summary())  # fmt: skip
    _cite(catalog, TRIPPY, doi="10.1/UPPER")
    finish_catalog(catalog)
    catalog.close()
    with closing(sqlite3.connect(path)) as db:  # as revision 0008 left it
        for index in ("ix_papers_title_key", "ix_citations_cited_arxiv", "ix_citations_cited_doi",
                      "ix_citations_cited_title_key"):  # fmt: skip
            db.execute(f"DROP INDEX {index}")
        db.execute("ALTER TABLE papers DROP COLUMN title_key")
        db.execute("ALTER TABLE citations DROP COLUMN cited_title_key")
        db.execute("UPDATE citations SET cited_id = NULL, cited_doi = '10.1/UPPER'")
        db.execute("UPDATE alembic_version SET version_num = '0008'")
        db.commit()
    catalog = Catalog(f"sqlite:///{path}")
    try:
        with catalog.session() as session:
            row = session.exec(select(Citation)).one()
            assert (row.cited_title_key, row.cited_doi, row.cited_id) == (title_key(TRIPPY), "10.1/upper", None)
        assert finish_catalog(catalog) == 1 and _linked(catalog) == ["2005.02877"]
    finally:
        catalog.close()


def _openalex_lists(catalog: Catalog, *works: tuple[str, str | None, str]) -> None:
    """OpenAlex's record of CITING, listing (OpenAlex id, arXiv id, title) works."""
    from retrieval.scholarly.records import ReferenceRecord

    record = PaperRecord(id=CITING, arxiv_id=CITING, openalex_id="W1", title="A paper whose reference list we read",
                         source="openalex", authors=[AuthorRecord(name="Ada Lovelace")],
                         references=[ReferenceRecord(openalex_id=w, arxiv_id=a, title=t)
                                                        for w, a, t in works])  # fmt: skip
    load_records(catalog, "openalex", [record], Summary())


def _edges(catalog: Catalog) -> list[Citation]:
    with catalog.session() as session:
        return list(session.exec(select(Citation).where(Citation.citing_id == CITING).order_by(Citation.id)))


@pytest.mark.parametrize("pdf_first", [True, False])
def test_the_same_work_from_openalex_and_the_pdf_is_one_reference_with_the_best_of_each(citing, pdf_first):
    """OpenAlex lists a work under its id, the PDF under its arXiv id: one edge, whatever came first. The title is
    OpenAlex's (a bibliographic record's, over what the list was read to say), with its source; the authors, year,
    venue and entry as printed are the list's."""
    steps = [lambda: _cite(citing, "Attention is all you need.", 2017, arxiv_id="1706.03762"),
             lambda: _openalex_lists(citing, ("W2963403868", "1706.03762", "Attention Is All You Need"))]
    for step in steps if pdf_first else steps[::-1]:
        step()
    (edge,) = _edges(citing)
    assert (edge.cited_title, edge.cited_title_source) == ("Attention Is All You Need", "openalex")
    assert (edge.cited_openalex_id, edge.cited_arxiv_id, edge.cited_year) == ("W2963403868", "1706.03762", 2017)
    assert edge.cited_authors == "Michael Heck" and edge.reference.startswith("Heck et al. Attention is all")


def test_a_title_alone_merges_only_when_no_id_or_year_says_otherwise(citing):
    _openalex_lists(citing, ("W1000", None, "A survey of dialogue state tracking"))
    _cite(citing, "A survey of dialogue state tracking", 2020)  # OpenAlex gave no id to compare: the same work
    _cite(citing, "Neural belief tracker for dialogue", 2017, arxiv_id="1606.03777")
    _cite(citing, "Neural belief tracker for dialogue", 2017, arxiv_id="1606.09999")  # another id: another work
    _cite(citing, "Deep learning for dialogue systems", 2017)
    _cite(citing, "Deep learning for dialogue systems", 2019)  # another year: another work
    edges = _edges(citing)
    assert len(edges) == 5 and edges[0].cited_year == 2020 and edges[0].cited_title_source == "openalex"
    assert [e.cited_title_source for e in edges[1:]] == ["pdf"] * 4
