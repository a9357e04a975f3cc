"""Researchers found by partial and other names from their terms' index (`retrieval.scholarly.terms`): the terms are
kept as researchers are added, renamed and deleted (a rolled-back record takes its terms back), rebuilt from rows
written around the ORM, and filled by revision 0005 in an archive made before it; the list of researchers and the
people search read them, never every name."""

from sqlalchemy import event, insert, text
from sqlmodel import select

from retrieval.scholarly import listings
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Paper, Researcher, ResearcherTerm
from retrieval.scholarly.researchers import find_researchers


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
