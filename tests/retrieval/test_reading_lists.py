"""Reading lists: BibTeX, RIS, CSL-JSON and plain ids read by their parsers, and what each entry becomes (joined,
requested from arXiv, not found, rejected), with its reason."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ingest.pipeline import load_records
from ingest.report import Summary
from jobs.queue import JobQueue
from jobs.requests import import_entries
from retrieval.library.reading_lists import read_reading_list
from retrieval.scholarly.records import PaperRecord
from tests.ingest.ondemand_fixtures import ASKED

SPECTER, GRAPH = "2004.07180", "1805.02262"
GRAPH_DOI = "10.18653/v1/N18-3011"
BIBTEX = f"""@article{{cohan2020specter, title={{{{SPECTER}}: Document-level Representation Learning}},
  eprint={{{SPECTER}}}, archivePrefix={{arXiv}}}}
@inproceedings{{ammar2018, title={{Construction of the Literature Graph in Semantic Scholar}}, doi={{{GRAPH_DOI}}}}}
@article{{unknown, title={{A Paper Nobody Has}}, doi={{10.1234/unknown.5678}}}}
@misc{{fetchme, title={{Asked For}}, eprint={{{ASKED}}}, archivePrefix={{arXiv}}}}
@article{{broken, title={{Unclosed
"""
RIS = f"""TY  - JOUR
TI  - SPECTER
UR  - https://arxiv.org/abs/{SPECTER}v2
ER  - 

TY  - CONF
TI  - Construction of the Literature Graph in Semantic Scholar
ER  - 

TI  - An entry that lost its type line
DO  - 10.1/x
ER  - 

TY  - JOUR
TI  - A Paper Nobody Has
DO  - 10.1234/unknown.5678
ER  - 
"""


def _record(arxiv_id: str, title: str, doi: str | None = None) -> PaperRecord:
    return PaperRecord(id=arxiv_id, arxiv_id=arxiv_id, doi=doi, title=title, abstract="", categories=["cs.CL"],
                       authors=[], source="test", published=datetime(2020, 1, 1, tzinfo=timezone.utc))  # fmt: skip


@pytest.fixture
def archive(empty_instance):
    return with_two_papers(empty_instance)


def with_two_papers(empty_instance):
    """SPECTER (by its arXiv id) and the literature graph paper (with its DOI) in an empty instance."""
    records = [_record(SPECTER, "SPECTER: Document-level Representation Learning using Citation-informed Transformers"),
               _record(GRAPH, "Construction of the Literature Graph in Semantic Scholar", GRAPH_DOI)]  # fmt: skip
    load_records(empty_instance.catalog(), "test", records, Summary())
    return empty_instance


def _import(archive, text: str, on_demand: bool = True):
    name, entries = read_reading_list(text)
    queue = JobQueue(archive.catalog().engine)
    report = import_entries(archive.archive(), archive.uploads(), queue, "jo", name, entries, on_demand=on_demand,
                            daily=20)  # fmt: skip
    return report, queue


def test_a_bibtex_export(archive):
    report, queue = _import(archive, BIBTEX)
    assert report.format == "BibTeX"
    assert report.counts() == {"joined": 2, "requested": 1, "not_found": 1, "rejected": 1}
    assert dict(report.joined) == {"cohan2020specter": SPECTER, "ammar2018": GRAPH}  # by arXiv id, by DOI
    assert report.requested == [("fetchme", ASKED)] and queue.live(f"paper:{ASKED}") is not None
    assert "10.1234/unknown.5678 is not in this archive" in dict(report.not_found)["unknown"]
    assert "malformed BibTeX" in report.rejected[0][1] and "broken" in report.rejected[0][0]
    assert archive.uploads().joined("jo") == [ASKED, GRAPH, SPECTER]  # the asked paper joins under its id
    assert archive.uploads().joined("kim") == []
    again, _ = _import(archive, BIBTEX)  # importing twice adds nothing twice; the job is shared
    assert again.counts()["requested"] == 1 and len(archive.uploads().joined("jo")) == 3


def test_an_ris_export_with_the_switch_off(archive):
    report, _ = _import(archive, RIS, on_demand=False)
    assert report.format == "RIS"
    graph_title = "Construction of the Literature Graph in Semantic Scholar"
    assert dict(report.joined) == {"SPECTER": SPECTER, graph_title: GRAPH}
    assert report.not_found == [("A Paper Nobody Has", "DOI 10.1234/unknown.5678 is not in this archive, and only "
                                 "arXiv papers can be fetched on request")]  # fmt: skip
    lost = "malformed RIS: an entry without its TY (type) line"
    assert report.rejected == [("An entry that lost its type line", lost)]


def test_csl_json_and_plain_identifiers(archive):
    csl = f'[{{"id": "s", "title": "x", "DOI": "10.48550/arXiv.{SPECTER}"}}, 7, {{"id": "empty"}}]'
    report, _ = _import(archive, csl, on_demand=False)
    assert report.format == "CSL-JSON" and report.joined == [("s", SPECTER)]
    assert [reason for _, reason in report.rejected] == ["malformed CSL-JSON: an item is not an object",
                                                         "no arXiv id, DOI or title"]  # fmt: skip
    listed = f"# my list\nhttps://arxiv.org/abs/{GRAPH}v1\nhttps://doi.org/{GRAPH_DOI}\nhello\n{ASKED}\n"
    report, _ = _import(archive, listed, on_demand=False)
    assert report.format == "identifiers" and [pid for _, pid in report.joined] == [GRAPH, GRAPH]
    assert report.rejected == [("hello", "not an arXiv id, an arXiv URL or a DOI")]
    assert "switched off" in report.not_found[0][1]
    with pytest.raises(ValueError, match="cannot be read"):
        read_reading_list("[not json")
