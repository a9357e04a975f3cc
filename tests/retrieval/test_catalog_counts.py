"""The counts the catalog keeps as it is written (`retrieval.scholarly.counts`) always equal counting the rows: after
new papers, an author list arXiv changed, an enrichment that names a researcher's ORCID (moving authorships to
another researcher), a new primary category; and the pages read them instead of counting."""

from collections import Counter

from sqlalchemy import func, select

from ingest.pipeline import load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.counts import PEOPLE_BLOCK, read_counts
from retrieval.scholarly.listings import categories, indexable_count, most_papers
from retrieval.scholarly.models import Authorship, Institution, Paper, Researcher
from retrieval.scholarly.records import AffiliationRecord, AuthorRecord, PaperRecord


def _counted(catalog: Catalog) -> dict[str, int]:
    """Every count, from the rows."""
    with catalog.session() as session:
        found = {m.__tablename__: session.execute(select(func.count()).select_from(m)).scalar_one()
                 for m in (Paper, Researcher, Institution, Authorship)}  # fmt: skip
        for model, column in ((Researcher, Authorship.researcher_id), (Institution, Authorship.institution_id)):
            rows = session.execute(select(column, func.count(func.distinct(Authorship.paper_id)))
                                   .where(column.is_not(None)).group_by(column)).all()  # fmt: skip
            found[f"{model.__tablename__}_with_papers"] = len(rows)
            for block, n in Counter(person // PEOPLE_BLOCK for person, _ in rows).items():  # the sitemap's blocks
                found[f"block:{model.__tablename__}:{block}"] = n
            kept = dict(session.execute(select(model.id, model.paper_count)).all())
            assert kept == {**{i: 0 for i in kept}, **dict(rows)}, model  # each one's own count
        for category, n in session.execute(select(Paper.primary_category, func.count()).where(
                Paper.primary_category.is_not(None)).group_by(Paper.primary_category)).all():  # fmt: skip
            found[f"category:{category}"] = n
        for block, n in Counter(i[:-4] for i in session.execute(select(Paper.id)).scalars()).items():
            found[f"block:papers:{block}"] = n
    return found


def _kept(catalog: Catalog) -> dict[str, int]:
    with catalog.session() as session:
        kept = read_counts(session)
    return {name: n for name, n in kept.items() if n and name != "citations"}


def _nonzero(counted: dict[str, int]) -> dict[str, int]:
    return {name: n for name, n in counted.items() if n}


def _paper(pid: str, authors: list[AuthorRecord], category: str = "cs.CL", source: str = "arxiv_api") -> PaperRecord:
    return PaperRecord(id=pid, arxiv_id=pid, title=f"Paper {pid}", abstract="Words.", authors=authors,
                       categories=[category], primary_category=category, source=source)  # fmt: skip


def _author(name: str, place: str | None = None, orcid: str | None = None) -> AuthorRecord:
    """With an affiliation named by its ROR id (the institution is made as the paper is written)."""
    where = [AffiliationRecord(raw=place, name=place, ror_id=f"https://ror.org/0{len(place)}x")] if place else []
    return AuthorRecord(name=name, affiliations=where, orcid=orcid)


def test_kept_counts_follow_every_kind_of_write(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'c.db'}")
    ana, bo, cy = _author("Ana Lima", "University of Porto"), _author("Bo Chen", "MIT"), _author("Cy Diaz")
    load_records(catalog, "arxiv_api", [_paper("2101.00001", [ana, bo]), _paper("2101.00002", [ana, cy]),
                                        _paper("2101.00003", [bo], "math.CO")], Summary())  # fmt: skip
    assert _kept(catalog) == _nonzero(_counted(catalog))
    assert _kept(catalog)["category:cs.CL"] == 2 and _kept(catalog)["researchers_with_papers"] == 3
    assert _kept(catalog)["institutions_with_papers"] == 2
    # arXiv changes an author list (Cy leaves, Dee joins) and a paper's primary category
    changed = [_paper("2101.00002", [ana, _author("Dee Evans")]), _paper("2101.00003", [bo], "cs.LG")]
    load_records(catalog, "arxiv_api", changed, Summary())
    assert _kept(catalog) == _nonzero(_counted(catalog))
    assert "category:math.CO" not in _kept(catalog) and _kept(catalog)["category:cs.LG"] == 1
    # another source names Ana's ORCID on one paper: that authorship may move to another researcher
    enriched = _paper("2101.00001", [_author("Ana Lima", orcid="0000-0002-1825-0097"), bo], source="openalex")
    load_records(catalog, "openalex", [enriched], Summary())
    assert _kept(catalog) == _nonzero(_counted(catalog))
    # what the pages read: the kept counts and the (papers, name) index, nothing counted
    assert indexable_count(catalog, "researchers") == _counted(catalog)["researchers_with_papers"]
    assert categories(catalog) == [("cs.CL", 2), ("cs.LG", 1)]
    rows, total, _ = most_papers(catalog, "researchers", 1, 10)
    assert total == _counted(catalog)["researchers_with_papers"] and rows[0][1] in {"Ana Lima", "Bo Chen"}
    assert [n for _, _, n in rows] == sorted((n for _, _, n in rows), reverse=True)
    assert catalog.counts()["papers"] == 3


def test_a_failed_write_moves_no_count(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'c.db'}")
    load_records(catalog, "arxiv_api", [_paper("2101.00001", [_author("Ana Lima")])], Summary())
    before = _kept(catalog)
    with catalog.session() as session:
        session.add(Paper(id="2101.00009", title="Never kept", primary_category="cs.CL"))
        session.flush()
        session.rollback()
    with catalog.session() as session:  # the next transaction of the same kind keeps nothing of the failed one
        session.add(Paper(id="2101.00010", title="Kept", primary_category="cs.CL"))
        session.commit()
    assert _kept(catalog) == {**before, "papers": 2, "category:cs.CL": 2, "block:papers:2101.0": 2} == _nonzero(
        _counted(catalog)
    )


def test_a_record_whose_savepoint_is_rolled_back_leaves_no_count(tmp_path):
    """The ingest writes each record in a SAVEPOINT and rolls back only a bad one: what that one flushed is not
    counted, what the others wrote is."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'c.db'}")
    with catalog.session() as session:
        for n, fails in ((1, False), (2, True), (3, False)):
            try:
                with session.begin_nested():
                    session.add(Paper(id=f"2101.0000{n}", title=f"Paper {n}", primary_category="cs.CL"))
                    session.flush()
                    if fails:
                        raise ValueError("a bad record")
            except ValueError:
                pass
        session.commit()
    assert _kept(catalog) == {"papers": 2, "category:cs.CL": 2, "block:papers:2101.0": 2} == _nonzero(_counted(catalog))


def test_nested_savepoints_take_back_only_what_was_noted_inside_them(tmp_path):
    """The journal marks a SAVEPOINT when something is first noted inside it: a savepoint that wrote before its inner
    one began, an inner one rolled back after the outer wrote, an outer one rolled back with a released inner one in
    it, and a savepoint opened and rolled back with nothing written each take back exactly their own notes."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'c.db'}")

    def add(session, n: int) -> None:
        session.add(Paper(id=f"2101.000{n:02d}", title=f"Paper {n}", primary_category="cs.CL"))
        session.flush()

    with catalog.session() as session:
        add(session, 1)
        outer = session.begin_nested()
        add(session, 2)  # the outer savepoint is marked here, after paper 1
        inner = session.begin_nested()
        add(session, 3)
        inner.rollback()  # takes back paper 3 only
        add(session, 4)
        outer.commit()  # released: papers 2 and 4 stay noted
        doomed = session.begin_nested()
        add(session, 5)
        kept_inside = session.begin_nested()
        add(session, 7)  # (doomed keeps the mark of its own first note, paper 5)
        kept_inside.commit()
        doomed.rollback()  # takes back papers 5 and 7, noted in it and in a savepoint released into it
        empty = session.begin_nested()
        empty.rollback()  # nothing noted inside: nothing taken back
        add(session, 6)
        session.commit()
    assert _kept(catalog) == {"papers": 4, "category:cs.CL": 4, "block:papers:2101.0": 4} == _nonzero(_counted(catalog))


def test_db_recount_mends_counts_after_rows_written_around_the_catalog(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from scholarloom.cli import app

    monkeypatch.setenv("SCHOLARLOOM_DATA_DIR", str(tmp_path))
    catalog = Catalog(f"sqlite:///{tmp_path / 'scholarloom.db'}")
    load_records(catalog, "arxiv_api", [_paper("2101.00001", [_author("Ana Lima")])], Summary())
    with catalog.engine.begin() as connection:  # a row written in SQL, past the ORM: nothing counts it
        connection.exec_driver_sql("INSERT INTO papers (id, title, abstract, categories, primary_category, topics, "
                                   "analysed, all_authors_matched, sources) VALUES ('2101.00002', 'Bulk', '', '[]', "
                                   "'math.CO', '[]', 0, 0, '[]')")  # fmt: skip
    assert _kept(catalog) != _nonzero(_counted(catalog))
    catalog.engine.dispose()
    result = CliRunner().invoke(app, ["db", "recount"])
    assert result.exit_code == 0 and "counted 2 papers, 1 researchers and 1 authorships" in result.output, result.output
    assert _kept(catalog) == _nonzero(_counted(catalog))


def test_a_researcher_removed_with_its_authorships_moved_leaves_the_count(tmp_path):
    """As `refine_researchers` does after a load: an authorship moves to another researcher and the one left
    without papers is deleted, in one transaction."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'c.db'}")
    load_records(catalog, "arxiv_api", [_paper("2101.00001", [_author("Ana Lima")]),
                                        _paper("2101.00002", [_author("Bo Chen")])], Summary())  # fmt: skip
    with catalog.session() as session:
        ana, bo = (session.execute(select(Researcher).where(Researcher.name == n)).scalar_one()
                   for n in ("Ana Lima", "Bo Chen"))  # fmt: skip
        row = session.execute(select(Authorship).where(Authorship.researcher_id == bo.id)).scalar_one()
        row.researcher_id = ana.id
        session.add(row)
        session.flush()
        session.delete(bo)
        session.commit()
    assert _kept(catalog) == _nonzero(_counted(catalog)) and _kept(catalog)["researchers_with_papers"] == 1


def test_the_demo_load_keeps_its_counts_right(demo):
    assert _kept(demo.catalog()) == _nonzero(_counted(demo.catalog()))
