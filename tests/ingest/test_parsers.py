"""Each parser on the real recorded data bundled with the demo corpus."""

import json
from datetime import datetime, timezone

import pytest

from ingest.demo import DEMO_DIR
from ingest.parsers.arxiv import atom_total, parse_atom, parse_site_record, parse_snapshot_lines
from ingest.parsers.openalex import abstract_from_index, parse_institutions, parse_works
from ingest.parsers.pdf_metadata import parse_pdf_metadata_lines
from ingest.parsers.ror import parse_ror_lines
from ingest.report import Failure
from retrieval.scholarly.records import PaperRecord


def test_atom_page():
    xml = (DEMO_DIR / "arxiv_api_atom" / "query_cs_start000_max100.xml").read_bytes()
    records = list(parse_atom(xml))
    assert len(records) == 100 and all(isinstance(r, PaperRecord) for r in records)
    assert atom_total(xml) == 566020
    first = records[0]
    assert first.id == "2512.13690" and first.version == 1
    assert first.title.startswith("DiffusionBrowser")
    assert first.categories[0] == first.primary_category == "cs.CV"
    assert first.authors[0].name == "Susung Hong"
    assert first.published == datetime(2025, 12, 15, 18, 59, 57, tzinfo=timezone.utc)
    assert first.pdf_url == "https://arxiv.org/pdf/2512.13690"


def test_snapshot_lines_decode_latex_names_and_version_dates():
    path = DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl"
    with path.open() as handle:
        first = next(parse_snapshot_lines(handle))
    assert first.id == "0704.0001"
    assert first.authors[0].name == "C. Balázs"
    assert [a.name for a in first.authors][-1] == "C.-P. Yuan"
    assert first.published.date().isoformat() == "2007-04-02" and first.version == 2
    assert "\n" not in first.title


def test_author_lines_give_names_only():
    """The demo's arXiv records with the author line as written: no "et al", no affiliation or its remains (nested
    parentheses), a collaboration before a colon apart from its member."""
    lines = (DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl").open(encoding="utf-8")
    names = {r.id: [a.name for a in r.authors] for r in parse_snapshot_lines(lines) if isinstance(r, PaperRecord)}
    assert names["0704.0025"] == ["A. S. Mishchenko", "N. Nagaosa"]
    assert names["0704.0437"] == ["CLEO Collaboration", "T. K. Pedlar"]
    assert names["0704.0020"] == ["The BABAR Collaboration", "B. Aubert"]
    assert names["0704.0044"][:2] == ["A. A. Schekochihin", "S. C. Cowley"]
    assert names["0704.0024"] == ["A.A. Serga", "M. Kostylev", "B. Hillebrands"]  # "..., and B. Hillebrands"
    assert names["0704.0297"][1:] == ["Philipp Podsiadlowski", "Stephan Rosswog"]  # "A, B & C"
    every = [n for authors in names.values() for n in authors]
    odd = [n for n in every if any(c in n for c in "()&") or n.lower().rstrip(".").endswith("et al")]
    odd += [n for n in every if n.startswith(("and ", "& "))]
    assert not odd


def test_site_record_takes_arxiv_dates():
    site = json.loads((DEMO_DIR / "seed" / "2006.07357.json").read_text())
    arxiv = json.loads((DEMO_DIR / "arxiv_records" / "2006.07357_hindsight_logging.json").read_text())
    record = parse_site_record(site, arxiv)
    assert record.published.date().isoformat() == "2020-06-12"  # not the site's 2020-06-01
    assert record.updated.date().isoformat() == "2020-12-02" and record.version == 2
    assert len(record.authors) == 8 and record.authors[3].name == "Bobby Yan"
    assert record.categories == ["cs.DC", "cs.DB", "cs.SE"]


def test_openalex_work_recognises_arxiv_and_references():
    payload = json.loads(
        (DEMO_DIR / "openalex" / "api_cassettes" / "works_filter_openalex_2ids_cursor.json").read_text()
    )
    records = {r.openalex_id: r for r in parse_works(payload)}
    work = records["W3045921891"]
    assert work.id == work.arxiv_id == "2007.14454"
    assert work.references and all(ref.openalex_id.startswith("W") for ref in work.references)
    assert work.authors and work.authors[0].openalex_id.startswith("A")


def test_openalex_null_title_is_a_failure():
    payload = json.loads(
        (DEMO_DIR / "openalex" / "api_cassettes" / "work_W4234567890_paratext_null_title.json").read_text()
    )
    (outcome,) = list(parse_works(payload))
    assert isinstance(outcome, Failure) and outcome.key == "W4234567890" and "title" in outcome.reason


def test_abstract_inverted_index():
    assert abstract_from_index({"world": [1], "Hello": [0], "again": [2]}) == "Hello world again"


def test_ror_v2_and_v1():
    with (DEMO_DIR / "ror" / "ror_v2_records_sample.jsonl").open() as handle:
        berkeley = next(parse_ror_lines(handle))
    assert berkeley.ror_id == "01an7q238" and berkeley.name == "University of California, Berkeley"
    assert "UC Berkeley" in berkeley.aliases and "UCB" in berkeley.acronyms
    assert berkeley.country_code == "US" and berkeley.city == "Berkeley"
    with (DEMO_DIR / "ror" / "ror_v1_records_sample.jsonl").open() as handle:
        v1 = next(parse_ror_lines(handle))
    assert v1.ror_id and v1.name and v1.types


def test_openalex_institution_entity():
    payload = json.loads((DEMO_DIR / "openalex" / "entities" / "I27837315.json").read_text())
    (inst,) = list(parse_institutions(payload))
    assert inst.ror_id == "00jmfr291" and inst.openalex_id == "I27837315" and inst.city == "Ann Arbor"


def test_openalex_sample_work_keeps_its_year():
    payload = json.loads((DEMO_DIR / "openalex" / "samples" / "works_sample.json").read_text())
    first = next(parse_works(payload))
    assert first.published is None and first.year == 2021  # the sample carries a year, not a date


def test_pdf_metadata_lines_become_papers_and_bad_lines_failures():
    good = (DEMO_DIR / "pdfs" / "metadata.jsonl").read_text().splitlines()
    template = json.loads(good[0])
    bad = [json.dumps({**template, "id": "2004.99999", "authors": "one string"}), "[1, 2]"]
    out = list(parse_pdf_metadata_lines([*good, *bad]))
    papers = [r for r in out if not isinstance(r, Failure)]
    assert len(papers) == 6 and {p.id for p in papers} >= {"2004.07180", "1802.05365"}
    elmo = next(p for p in papers if p.id == "1802.05365")
    assert elmo.arxiv_id == "1802.05365" and elmo.published.isoformat().startswith("2018-02-15")
    assert elmo.authors[0].name == "Matthew E. Peters" and elmo.doi == "10.18653/v1/N18-1202"
    failures = [r for r in out if isinstance(r, Failure)]
    assert [f.key for f in failures] == ["2004.99999", "line 8"] and "authors" in failures[0].reason


def test_json_nested_too_deeply_is_one_failure_not_the_end_of_the_run(tmp_path):
    from ingest.demo import _json_file
    from ingest.http import FetchError, Response
    from ingest.parsers.openalex import parse_works

    deep = "[" * 100_000 + "]" * 100_000
    good = (DEMO_DIR / "arxiv_metadata" / "arxiv-abs-0704.0001-0704.1001.jsonl").read_text().splitlines()[:2]
    out = list(parse_snapshot_lines([good[0], deep, '{"id": ' + deep + "}", good[1]]))
    assert [type(o).__name__ for o in out] == ["PaperRecord", "Failure", "Failure", "PaperRecord"]
    assert "nested too deeply" in out[1].reason
    (tmp_path / "deep.json").write_text(deep)
    (failure,) = _json_file(tmp_path / "deep.json", parse_works)
    assert "nested too deeply" in failure.reason
    with pytest.raises(FetchError, match="nested too deeply"):
        Response("https://api.openalex.org/works", 200, {}, deep.encode()).json()
