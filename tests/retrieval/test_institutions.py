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
