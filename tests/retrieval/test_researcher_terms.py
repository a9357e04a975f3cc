"""Researchers found by partial and other names from their terms' index (`retrieval.scholarly.terms`): the terms are
kept as researchers are added, renamed and deleted (a rolled-back record takes its terms back), rebuilt from rows
written around the ORM; each term keeps its researcher's paper count as papers are written, so a word's researchers
come most papers first from the (term, papers) index; revision 0006 fills those counts in an archive made before
it; the list of researchers and the people search read them, never every name."""

from sqlalchemy import event, insert, text
from sqlmodel import select

from retrieval.scholarly import listings
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Paper, Researcher, ResearcherTerm
from retrieval.scholarly.researchers import find_researchers


def _papers(catalog: Catalog) -> dict[int, set[int]]:
    """The paper counts each researcher's terms hold (one value each when they agree)."""
    with catalog.session() as session:
        rows = session.exec(select(ResearcherTerm.researcher_id, ResearcherTerm.papers)).all()
    found: dict[int, set[int]] = {}
    for researcher_id, papers in rows:
        found.setdefault(researcher_id, set()).add(papers)
    return found


def _kept(catalog: Catalog) -> dict[int, set[int]]:
    """What `_papers` must be: each researcher's own kept count, on every one of its terms."""
    with catalog.session() as session:
        return {i: {n} for i, n in session.exec(select(Researcher.id, Researcher.paper_count)).all()}


def _terms(catalog: Catalog) -> dict[int, set[str]]:
    with catalog.session() as session:
        rows = session.exec(select(ResearcherTerm)).all()
    found: dict[int, set[str]] = {}
    for row in rows:
        found.setdefault(row.researcher_id, set()).add(row.term)
    return found


def test_terms_follow_every_write_and_find_partial_and_other_names(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    with catalog.session() as session:
        ada = Researcher(identity_key="name:ada byron", name="Ada Byron", name_key="ada byron")
        jo = Researcher(identity_key="orcid:1", name="José Müller-Ortiz", name_key="jose muller ortiz",
                        aliases=["J. Müller"])  # fmt: skip
        session.add_all([ada, jo, Paper(id="2301.00001", title="A paper")])
        session.flush()
        session.add_all([Authorship(paper_id="2301.00001", position=0, raw_name="Ada Byron", researcher_id=ada.id),
                         Authorship(paper_id="2301.00001", position=1, raw_name="J. Müller", researcher_id=jo.id)])
        session.commit()
        ada_id, jo_id = ada.id, jo.id
    assert _terms(catalog) == {ada_id: {"w:ada", "w:byron"},
                               jo_id: {"w:jose", "w:muller", "w:ortiz", "a:j muller"}}  # fmt: skip
    assert [c.researcher.id for c in find_researchers(catalog, "Müller")] == [jo_id]  # a word of the name
    assert [c.researcher.id for c in find_researchers(catalog, "j. muller")] == [jo_id]  # another name
    assert find_researchers(catalog, "mull") == []  # words are whole words
    rows, total, _ = listings.most_papers(catalog, "researchers", 1, 10, "ORTIZ jose")
    assert total == 1 and rows[0][0] == jo_id

    with catalog.session() as session:  # renamed, and a record rolled back: its terms go with it
        renamed = session.get(Researcher, ada_id)
        renamed.name, renamed.name_key, renamed.aliases = "Ada Lovelace", "ada lovelace", ["Augusta Ada King"]
        session.add(renamed)
        session.commit()
        try:
            with session.begin_nested():
                session.add(Researcher(identity_key="name:zed", name="Zed Quux", name_key="zed quux"))
                session.flush()
                raise RuntimeError("a bad record")
        except RuntimeError:
            pass
        session.commit()
    assert _terms(catalog)[ada_id] == {"w:ada", "w:lovelace", "a:augusta ada king"}
    assert "w:zed" not in {t for terms in _terms(catalog).values() for t in terms}
    assert [c.researcher.id for c in find_researchers(catalog, "Augusta Ada King")] == [ada_id]

    with catalog.session() as session:
        session.exec(text("DELETE FROM authorships WHERE researcher_id = :i").bindparams(i=jo_id))
        session.delete(session.get(Researcher, jo_id))
        session.commit()
    assert set(_terms(catalog)) == {ada_id}

    with catalog.engine.begin() as connection:  # written around the ORM (a bulk load): `recount` makes its terms
        connection.execute(insert(Researcher.__table__), [{"id": 99, "identity_key": "name:x", "name": "Xu Wei",
                                                            "name_key": "xu wei", "aliases": []}])  # fmt: skip
    catalog.recount()
    assert _terms(catalog)[99] == {"w:xu", "w:wei"}
    assert _papers(catalog) == _kept(catalog) == {ada_id: {1}, 99: {0}}
    catalog.close()


def _people(catalog: Catalog, counts: dict[str, int]) -> dict[str, int]:
    """Researchers named `name` with `counts[name]` papers each (written through the ORM); their ids by name."""
    with catalog.session() as session:
        people = {name: Researcher(identity_key=f"name:{name}", name=name.title(), name_key=name) for name in counts}
        session.add_all(people.values())
        session.flush()
        papers = {f"{name.replace(' ', '-')}.{n}": name for name, count in counts.items() for n in range(count)}
        session.add_all([Paper(id=paper, title=paper) for paper in papers])
        session.flush()
        session.add_all([Authorship(paper_id=paper, position=0, raw_name=name, researcher_id=people[name].id)
                         for paper, name in papers.items()])  # fmt: skip
        session.commit()
        return {name: r.id for name, r in people.items()}


def test_a_words_researchers_come_most_papers_first_and_their_counts_follow_the_papers(tmp_path):
    words_researchers_most_papers_first(f"sqlite:///{tmp_path / 'catalog.db'}")  # PostgreSQL: tests/test_database.py


def words_researchers_most_papers_first(url: str) -> None:
    catalog = Catalog(url)
    ids = _people(catalog, {"li wang": 3, "wang fang": 5, "ming wang": 0, "wang li": 2, "hua li": 7, "yan wang": 2})
    assert _papers(catalog) == _kept(catalog)
    rows, total, _ = listings.most_papers(catalog, "researchers", 1, 10, "Wang")
    assert total == 4  # those with papers
    assert [(name, papers) for _, name, papers in rows] == [("Wang Fang", 5), ("Li Wang", 3), ("Wang Li", 2),
                                                            ("Yan Wang", 2)]  # fmt: skip
    assert [row[0] for row in rows[2:]] == sorted([ids["wang li"], ids["yan wang"]])  # ties by id
    second, total, at = listings.most_papers(catalog, "researchers", 2, 3, "wang")
    assert (total, at.page, [row[1] for row in second]) == (4, 2, ["Yan Wang"])
    both, total, _ = listings.most_papers(catalog, "researchers", 1, 10, "li wang")  # every word; the rarer first
    assert total == 2 and [row[1] for row in both] == ["Li Wang", "Wang Li"]
    found = find_researchers(catalog, "wang", limit=3)  # anyone with the word, papers or not, most papers first
    assert [(c.researcher.name, c.paper_count) for c in found] == [("Wang Fang", 5), ("Li Wang", 3), ("Wang Li", 2)]

    with catalog.session() as session:  # papers added, an authorship moved, a researcher renamed: counts follow
        session.add(Paper(id="new.1", title="new"))
        session.flush()
        session.add(Authorship(paper_id="new.1", position=0, raw_name="Ming Wang", researcher_id=ids["ming wang"]))
        session.add(Authorship(paper_id="new.1", position=1, raw_name="Yan Wang", researcher_id=ids["yan wang"]))
        moved = session.exec(select(Authorship).where(Authorship.researcher_id == ids["hua li"])).first()
        moved.researcher_id = ids["wang li"]
        renamed = session.get(Researcher, ids["wang fang"])
        renamed.name, renamed.name_key = "Fang Wang-Zhou", "fang wang zhou"
        session.commit()
    assert _papers(catalog) == _kept(catalog)
    rows, total, _ = listings.most_papers(catalog, "researchers", 1, 10, "wang")
    assert total == 5 and [(name, papers) for _, name, papers in rows] == [
        ("Fang Wang-Zhou", 5), ("Li Wang", 3), ("Wang Li", 3), ("Yan Wang", 3), ("Ming Wang", 1)]  # fmt: skip
    assert [c.researcher.name for c in find_researchers(catalog, "zhou")] == ["Fang Wang-Zhou"]
    catalog.close()


def test_revision_0006_gives_an_archives_terms_their_counts(tmp_path):
    path = tmp_path / "catalog.db"
    catalog = Catalog(f"sqlite:///{path}")
    ids = _people(catalog, {"ada byron": 2, "alan turing": 0})
    with catalog.engine.begin() as connection:  # as revision 0005 left it: no counts beside the terms
        connection.execute(text("DROP INDEX ix_researcher_terms_most_papers"))
        connection.execute(text("DROP INDEX ix_researcher_terms_researcher"))
        connection.execute(text("ALTER TABLE researcher_terms DROP COLUMN papers"))
        connection.execute(text("UPDATE alembic_version SET version_num = '0005'"))
    catalog.close()
    catalog = Catalog(f"sqlite:///{path}")  # opening migrates
    assert _papers(catalog) == _kept(catalog) == {ids["ada byron"]: {2}, ids["alan turing"]: {0}}
    rows, total, _ = listings.most_papers(catalog, "researchers", 1, 10, "byron")
    assert total == 1 and rows[0][1:] == ("Ada Byron", 2)
    catalog.close()


def test_the_people_list_and_search_read_no_name_one_by_one(tmp_path):
    """A name search reads the terms' index and names by equality (indexed), never a pattern over every name."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    with catalog.session() as session:
        session.add_all([Researcher(identity_key=f"name:{n}", name=f"Person {n}", name_key=f"person {n}")
                         for n in range(50)])  # fmt: skip
        session.commit()
    said: list[str] = []
    event.listen(catalog.engine, "before_cursor_execute", lambda *a: said.append(a[2]))
    find_researchers(catalog, "person 7 unknown")
    listings.most_papers(catalog, "researchers", 1, 10, "person")
    assert any("researcher_terms" in s for s in said) and not [s for s in said if "LIKE" in s.upper()]
    catalog.close()
