"""`ingest.pipeline`: the cross-record work after a load (`finish_catalog`) runs when records changed since the last
one, also when the run that changed them stopped before finishing, and is skipped when nothing changed."""

import pytest
from sqlmodel import select

import ingest.pipeline
from ingest.harvest.s2 import add_citing_papers
from ingest.pipeline import FINISH, RELINK, finish_catalog, load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Citation, LedgerEntry
from retrieval.scholarly.records import AuthorRecord, PaperRecord, ReferenceRecord

CITING, CITED = "2101.00001", "2101.00002"


@pytest.fixture
def catalog(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    yield catalog
    catalog.close()


@pytest.fixture
def refines(monkeypatch) -> list[int]:
    """How many times a finish did its work (refined the researchers)."""
    calls: list[int] = []
    real = ingest.pipeline.refine_researchers

    def counted(session):
        calls.append(1)
        return real(session)

    monkeypatch.setattr(ingest.pipeline, "refine_researchers", counted)
    return calls


def _paper(arxiv_id: str, references: tuple[str, ...] = ()) -> PaperRecord:
    return PaperRecord(
        id=arxiv_id, arxiv_id=arxiv_id, title=f"Paper {arxiv_id}", authors=[AuthorRecord(name="Ada Lovelace")],
        references=[ReferenceRecord(arxiv_id=r) for r in references], source="arxiv_api",
    )  # fmt: skip


def _edges(catalog: Catalog) -> list[tuple[str, str | None]]:
    with catalog.session() as session:
        return [(row.citing_id, row.cited_id) for row in session.exec(select(Citation).order_by(Citation.citing_id))]


def test_a_finish_owed_by_an_interrupted_run_is_done_by_the_next_and_only_then(catalog, refines):
    load_records(catalog, "arxiv_api", [_paper(CITING, (CITED,))], Summary())
    assert finish_catalog(catalog) == 0 and _edges(catalog) == [(CITING, None)]  # the cited paper is not here yet
    assert finish_catalog(catalog) == 0 and len(refines) == 1  # nothing changed since: nothing done
    load_records(catalog, "arxiv_api", [_paper(CITED)], Summary())
    assert _edges(catalog) == [(CITING, CITED)]  # the edge waiting for the paper is linked as it arrives
    # ... and the run stops here, before its finish. The rerun writes nothing (its record is unchanged) ...
    rerun = Summary()
    load_records(catalog, "arxiv_api", [_paper(CITED)], rerun)
    assert rerun.counts["unchanged"] == 1 and len(refines) == 1
    # ... but the finish the first run owed is still owed, and done once.
    assert finish_catalog(catalog) == 0 and len(refines) == 2
    assert finish_catalog(catalog) == 0 and len(refines) == 2


def test_an_archive_without_the_note_is_finished_once(catalog, refines):
    """An archive loaded before the ledger noted finishes (or a fresh one) gets one, which reads every unlinked
    edge again (edges stored before they were linked as papers arrive)."""
    load_records(catalog, "arxiv_api", [_paper(CITING, (CITED,)), _paper(CITED)], Summary())
    with catalog.session() as session:
        for row in session.exec(select(Citation)):
            row.cited_id = None  # as an archive older than linking on arrival holds it
            session.add(row)
        session.delete(session.get(LedgerEntry, FINISH))
        session.commit()
    assert finish_catalog(catalog) == 1 and finish_catalog(catalog) == 0 and len(refines) == 1
    assert _edges(catalog) == [(CITING, CITED)]


def test_a_relink_asked_by_a_revision_survives_later_writes_and_is_done_once(catalog, refines):
    load_records(catalog, "arxiv_api", [_paper(CITING, (CITED,)), _paper(CITED)], Summary())
    finish_catalog(catalog)
    with catalog.session() as session:
        for row in session.exec(select(Citation)):
            row.cited_id = None
            session.add(row)
        entry = session.get(LedgerEntry, FINISH)
        entry.content_hash = RELINK  # what revision 0009 writes
        session.add(entry)
        session.commit()
    load_records(catalog, "arxiv_api", [_paper("2101.00003")], Summary())  # a write before the finish
    assert finish_catalog(catalog) == 1 and _edges(catalog) == [(CITING, CITED)]
    assert finish_catalog(catalog) == 0


def test_citing_papers_from_semantic_scholar_are_linked_at_once(catalog, refines):
    """S2's "cited by" adds edges outside `load_records`: they point at the paper as they are written."""
    load_records(catalog, "arxiv_api", [_paper(CITING), _paper(CITED)], Summary())
    finish_catalog(catalog)
    citing = [{"externalIds": {"ArXiv": f"{CITING}v2"}}]
    assert add_citing_papers(catalog, CITED, CITED, None, citing) == 1
    assert _edges(catalog) == [(CITING, CITED)]
    assert finish_catalog(catalog) == 0 and len(refines) == 1  # nothing owed