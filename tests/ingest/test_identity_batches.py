"""Researcher identity in batches (`retrieval.scholarly.identity.KnownNames`): a batch of records reads what name
matching needs about all its names in a few queries, not several a name, and matches every author exactly as the
one-name-at-a-time path does, also when the evidence was written earlier in the same batch."""

import hashlib
import json
import uuid
from pathlib import Path

from sqlalchemy import event, text
from sqlmodel import select

from bench.identity_statements import NAMESAKES
from bench.identity_statements import paper as _paper
from ingest.demo import demo_sources
from ingest.pipeline import finish_catalog, load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Authorship, Researcher
from retrieval.scholarly.records import PaperRecord
from retrieval.scholarly.upsert import upsert_paper
from tests.demo_cache import cache_root, fingerprint

# What the one-at-a-time reference over the demo depends on: the corpus, the code that writes and matches (and what
# it imports), the locked libraries (in `fingerprint`) and this file (which records it reads, how it writes them).
REFERENCE_INPUTS = ("data/demo", "ingest", "retrieval", "common")


def _links(catalog: Catalog) -> dict[tuple[str, int], tuple[str, str, float]]:
    with catalog.session() as session:
        rows = session.exec(select(Authorship, Researcher.identity_key)
                            .join(Researcher, Authorship.researcher_id == Researcher.id)).all()  # fmt: skip
    return {(a.paper_id, a.position): (key, a.match_method, a.match_confidence) for a, key in rows}


def _one_at_a_time(catalog: Catalog, records: list) -> None:
    """The reference: each record written in turn, every name queried (no `KnownNames`)."""
    with catalog.session() as session:
        for record in records:
            upsert_paper(session, record)
        session.commit()


def test_a_batch_matches_as_one_name_at_a_time_does_even_on_evidence_from_the_same_batch(tmp_path):
    batched, single = (Catalog(f"sqlite:///{tmp_path / name}.db") for name in ("batched", "single"))
    load_records(batched, "arxiv_api", NAMESAKES, Summary())
    _one_at_a_time(single, NAMESAKES)
    links = _links(batched)
    assert links == _links(single)
    assert links[("2301.00003", 0)] == ("openalex:A2", "name+coauthors", 0.9)
    assert links[("2301.00004", 0)][1:] == ("name?", 0.3)
    assert links[("2301.00005", 0)][0] != links[("2301.00004", 0)][0]  # other co-authors: another namesake row
    assert len({links[(f"2301.{n:05d}", p)][0] for n, p in ((3, 2), (5, 2), (6, 0))}) == 1
    batched.close()
    single.close()


def _demo_papers_sources():
    for source in (s for s in demo_sources() if s.stage != "demo:ror/ror_v2_records_sample.jsonl"):
        records = [r for r in source.read() if not isinstance(r, PaperRecord) or r.authors]
        yield source, records, [r for r in records if isinstance(r, PaperRecord)]


def _demo_reference(tmp_path) -> dict[tuple[str, int], tuple[str, str, float]]:
    """The demo's authorships written one record at a time (`_one_at_a_time`): the reference the batches must match.
    Most of the test's time (the demo's 2,000 papers, every name queried); it depends only on the corpus, the code
    under `REFERENCE_INPUTS`, the locked libraries and this file, so it is kept under a digest of them beside the
    demo's build (`tests/demo_cache.py`; SL_TEST_CACHE=off computes it every run) and computed again whenever any of
    them changes."""
    root = cache_root()
    kept = None
    if root is not None:
        digest = hashlib.sha256(fingerprint(REFERENCE_INPUTS).encode() + Path(__file__).read_bytes()).hexdigest()[:20]
        kept = root / f"identity-reference-{digest}.json"
        if kept.is_file():
            return {(paper, position): (key, method, confidence)
                    for paper, position, key, method, confidence in json.loads(kept.read_text())}  # fmt: skip
    single = Catalog(f"sqlite:///{tmp_path / 'single'}.db")
    for source, records, papers in _demo_papers_sources():
        if len(papers) < len(records):  # institutions and researchers: the same writes on both sides
            load_records(single, source.stage, [r for r in records if not isinstance(r, PaperRecord)], Summary())
        _one_at_a_time(single, papers)
    finish_catalog(single)
    links = _links(single)
    single.close()
    if kept is not None:  # a cache that cannot be written only costs time
        partial = kept.with_name(f"{kept.name}.{uuid.uuid4().hex}.partial")
        try:
            for old in root.glob("identity-reference-*"):  # one kept reference
                old.unlink(missing_ok=True)
            partial.write_text(json.dumps([[*key, *value] for key, value in sorted(links.items())]))
            partial.replace(kept)
        except OSError:
            partial.unlink(missing_ok=True)
    return links


def test_the_demos_records_match_in_batches_as_one_at_a_time(demo, tmp_path):
    """The demo as `ingest demo` loaded it, in batches (arXiv's snapshot and API pages, OpenAlex's works: name-only
    authors, identified ones, and the enrichment that links them; the run's shared build, read here, not made
    again), against every demo source whose records are papers written one record at a time after the same
    institutions and researchers (but ROR's larger sample: the works name their institutions' ROR ids themselves),
    then the finish: the same researcher, method and confidence for every authorship. (The one-at-a-time side is
    `_demo_reference`, kept between runs of an unchanged tree.)"""
    links = _links(demo.catalog())
    assert len(links) > 5_000 and links == _demo_reference(tmp_path)
    assert {method for _, method, _ in links.values()} >= {"name", "name+coauthors", "openalex"}


def test_a_batch_reads_its_names_in_a_few_queries_not_several_a_name(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    load_records(catalog, "arxiv_api", NAMESAKES, Summary())  # researchers to find: every name has a candidate
    records = [_paper(100 + n, "Ada Byron", f"Person {n}", f"Person {n + 1}", "Wei Wang") for n in range(200)]
    statements: list[str] = []
    event.listen(catalog.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    load_records(catalog, "arxiv_api", records, Summary())
    lookups = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "FROM researchers" in s]
    # 800 authors, 201 distinct names: one read of the candidates, their co-authors, their places, the identity keys
    assert len(lookups) <= 6, lookups[:10]
    with catalog.session() as session:
        assert len(session.exec(select(Researcher).where(Researcher.name_key.like("person %"))).all()) == 201
    catalog.close()


def test_a_batch_takes_sqlites_write_lock_before_it_reads_its_names(tmp_path):
    """The batch's reads come after SQLite's write lock (BEGIN IMMEDIATE): a transaction that began with a read
    fails its first write at once when another connection committed in between, and every record of the batch
    would be reported as not stored. Here another connection tries to commit just as the batch reads its names."""
    from sqlalchemy import create_engine

    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    catalog = Catalog(url)
    load_records(catalog, "arxiv_api", NAMESAKES[:2], Summary())
    other = create_engine(url, connect_args={"timeout": 0.2})
    tried: list[str] = []

    def meanwhile(connection, cursor, statement, *_):
        if "FROM researchers" in statement and "name_key IN" in statement and not tried:
            try:
                with other.begin() as writer:  # a chat's history, a sign-in: any other writer of the file
                    writer.execute(text("UPDATE catalog_counts SET value = value WHERE name = 'papers'"))
                tried.append("committed")
            except Exception as exc:  # the batch holds the write lock: the other writer waits, then gives up
                tried.append(type(exc).__name__)

    event.listen(catalog.engine, "before_cursor_execute", meanwhile)
    summary = Summary()
    load_records(catalog, "arxiv_api", NAMESAKES[2:], summary)
    assert tried == ["OperationalError"] and not summary.failures and summary.counts["added"] == 4
    other.dispose()
    catalog.close()
