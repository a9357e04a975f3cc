"""What linking a reference to its paper costs as the archive grows (issue 40): a paper's arrival finds the edges
waiting for it by its ids and title key, from the edges' indexes, so it should cost the same beside a million
unlinked edges as beside none. Also the one-off costs of revision 0009 at that size: its backfill of the title keys,
and the finish that reads every unlinked edge again once.

    .venv/bin/python -m bench.reference_links --work /tmp/rl --edges 1000000 --papers 500

SYNTHETIC: `--edges` unlinked citation edges written in bulk (half with an arXiv id nobody holds, half listed by a
title alone, as a PDF's reference list leaves them) from 2,000 citing papers; then `--papers` new papers are loaded
through `load_records` (the ingest path), every fifth of them cited by an edge waiting under its arXiv id and every
seventh by one waiting under its title. Prints ms per arriving paper with and without the edges, and checks the
waiting edges were linked.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from sqlalchemy import insert
from sqlmodel import select

from ingest.pipeline import FINISH, RELINK, finish_catalog, load_records
from ingest.report import Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Citation, LedgerEntry, title_key
from retrieval.scholarly.records import AuthorRecord, PaperRecord

CITING = 2000
WORDS = ("graph", "neural", "dialogue", "state", "tracking", "retrieval", "sparse", "dense", "learning", "attention",
         "transformer", "survey", "efficient", "scalable", "robust", "language", "model", "vision", "causal", "data")


def _edge(**values) -> dict:
    """An edge's row with every column the bulk insert writes (one shape for all rows of an executemany)."""
    return {"cited_arxiv_id": None, "cited_title": None, "cited_title_key": None, "cited_title_source": None,
            "cited_year": None, **values}  # fmt: skip


def _title(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(6)) + f" number {n}"


def _paper(arxiv_id: str, title: str) -> PaperRecord:
    return PaperRecord(id=arxiv_id, arxiv_id=arxiv_id, title=title, year=2024, source="arxiv_api",
                       authors=[AuthorRecord(name="Ada Lovelace")])  # fmt: skip


def build(work: Path, edges: int, papers: int, seed: int = 7) -> tuple[Catalog, list[PaperRecord], int]:
    """A catalog with the citing papers and `edges` unlinked edges; returns it, the papers to load after, and how
    many edges wait for them."""
    rng = random.Random(seed)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    catalog = Catalog(f"sqlite:///{work / 'catalog.db'}")
    load_records(catalog, "arxiv_api", [_paper(f"2001.{n:05d}", _title(rng, n)) for n in range(CITING)], Summary())
    arriving = [_paper(f"2402.{n:05d}", _title(rng, 10_000_000 + n)) for n in range(papers)]
    rows, waiting = [], 0
    for n, paper in enumerate(arriving):  # the edges that wait for the papers about to arrive
        citing = f"2001.{rng.randrange(CITING):05d}"
        if n % 5 == 0:
            rows.append(_edge(citing_id=citing, cited_key=f"arxiv:{paper.arxiv_id}", cited_arxiv_id=paper.arxiv_id))
            waiting += 1
        elif n % 7 == 0:
            rows.append(_edge(citing_id=citing, cited_key=f"ref:w{n}", cited_title=paper.title,
                             cited_title_key=title_key(paper.title), cited_title_source="pdf", cited_year=2024))
            waiting += 1
    with catalog.engine.begin() as connection:
        for start in range(0, edges, 50_000):
            batch = []
            for n in range(start, min(edges, start + 50_000)):
                citing = f"2001.{rng.randrange(CITING):05d}"
                if n % 2:
                    batch.append(_edge(citing_id=citing, cited_key=f"arxiv:{1000 + n // 100000:04d}.{n % 100000:05d}",
                                      cited_arxiv_id=f"{1000 + n // 100000:04d}.{n % 100000:05d}"))  # fmt: skip
                else:
                    title = _title(rng, n)
                    batch.append(_edge(citing_id=citing, cited_key=f"ref:{n}", cited_title=title,
                                      cited_title_key=title_key(title), cited_title_source="pdf", cited_year=2019))
            connection.execute(insert(Citation.__table__), batch)
        if rows:
            connection.execute(insert(Citation.__table__), rows)
    return catalog, arriving, waiting


def arrive(catalog: Catalog, papers: list[PaperRecord]) -> float:
    """Seconds per paper to load these papers (a transaction per 200, as an ingest writes them)."""
    started = time.perf_counter()
    load_records(catalog, "arxiv_api", papers, Summary())
    return (time.perf_counter() - started) / len(papers)


def linked_to(catalog: Catalog, papers: list[PaperRecord]) -> int:
    ids = [p.id for p in papers]
    with catalog.session() as session:
        return len(session.exec(select(Citation.id).where(Citation.cited_id.in_(ids))).all())


def upgrade_cost(work: Path, catalog: Catalog) -> tuple[float, float, int]:
    """Revision 0009 on this catalog as 0008 left it (its columns and indexes taken away, every edge unlinked), then
    the finish it asks for: (seconds to migrate, seconds to relink, edges relinked)."""
    path = work / "catalog.db"
    catalog.close()
    with closing(sqlite3.connect(path)) as db:
        for index in ("ix_papers_title_key", "ix_citations_cited_arxiv", "ix_citations_cited_doi",
                      "ix_citations_cited_title_key"):  # fmt: skip
            db.execute(f"DROP INDEX {index}")
        for table, column in (("papers", "title_key"), ("citations", "cited_title_key"),
                              ("citations", "cited_title_source")):  # fmt: skip
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("UPDATE citations SET cited_id = NULL")
        db.execute("UPDATE alembic_version SET version_num = '0008'")
        db.commit()
        db.execute("VACUUM")
    started = time.perf_counter()
    migrated = Catalog(f"sqlite:///{path}")
    migrating = time.perf_counter() - started
    with migrated.session() as session:
        assert session.get(LedgerEntry, FINISH).content_hash == RELINK
    started = time.perf_counter()
    relinked = finish_catalog(migrated)
    relinking = time.perf_counter() - started
    migrated.close()
    return migrating, relinking, relinked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--papers", type=int, default=500)
    args = parser.parse_args()
    for edges in (0, args.edges):
        started = time.perf_counter()
        catalog, arriving, waiting = build(args.work / f"edges-{edges}", edges, args.papers)
        built = time.perf_counter() - started
        per_paper = arrive(catalog, arriving)
        found = linked_to(catalog, arriving)
        print(f"{edges:>9,} unlinked edges (built in {built:.0f} s): {1000 * per_paper:.2f} ms per arriving paper; "
              f"{found} of the {waiting} edges waiting for them linked on arrival")  # fmt: skip
        assert found == waiting
        if edges:
            migrating, relinking, relinked = upgrade_cost(args.work / f"edges-{edges}", catalog)
            print(f"revision 0009 on it: {migrating:.1f} s to migrate (title keys filled, indexes made); the relink "
                  f"it asks for: {relinking:.1f} s, {relinked} edges linked")  # fmt: skip
        else:
            catalog.close()


if __name__ == "__main__":
    main()
