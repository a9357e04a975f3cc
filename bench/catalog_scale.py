"""The catalog at a million papers: every page kind and API route timed on a served instance.

    .venv/bin/python -m bench.catalog_scale build --papers 1000000 --work /tmp/catalog-1m [--demo DEMO_DATA]
    .venv/bin/python -m bench.catalog_scale pages --work /tmp/catalog-1m [--requests 20]
    .venv/bin/python -m bench.catalog_scale both --postgres --papers 1000000 --work /tmp/catalog-1m-pg

`--postgres` starts a throwaway PostgreSQL server (Debian's binaries, `harness.postgres`) for one `both` run;
`--database-url` uses one of your own (an empty database) for `build` and `pages`.

The catalog is SYNTHETIC, made from the real demo (`--demo`: a data directory holding it; `make demo` makes
`data/local`): each paper joins the first half of one real abstract to the second half of another and takes its
title and categories from the first. It has ~3 researchers per paper (names recombined from the demo's first and
last names), ~6 authorships per paper (researchers drawn so that a few have thousands of papers, as in a real
archive), an institution on half the authorships (the demo's, recombined), and 5 citations per paper to older
papers. Papers get arXiv-style ids month by month from 2007-01, so every paper page, listing and feed works.

Rows are written straight into the product's own tables (made by its migrations) in bulk: this measures reading a
catalog of that size, not writing one (`bench.snapshot_import` measures the import). The index is the demo's (the
search routes' hits are the demo papers; their catalog side is timed at this size).

`pages` serves the instance (`scholarloom serve` in a child process, as a user would: `harness.serve`) and times
each route kind from outside over `--requests` requests, each to a different address where the route takes one
(papers, people, category pages deep in the listing), redirects followed, after one warm-up request each. It
prints p50/p95 per route kind and the server's RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.serve import served  # noqa: E402
from retrieval.scholarly.models import normalise_name, title_key  # noqa: E402

MONTHS_FROM = (2007, 1)
RESEARCHERS_PER_PAPER = 3
AUTHORS_PER_PAPER = (1, 11)  # uniform: mean 6
CITATIONS_PER_PAPER = 5
CHUNK = 20_000


def _months(papers: int) -> list[tuple[int, int, int]]:
    """(year, month, papers that month): arXiv-style ids hold 5 digits a month, so spread over enough months."""
    per_month = min(99_999, max(1_000, papers // 200))
    months, left, (year, month) = [], papers, MONTHS_FROM
    while left > 0:
        months.append((year, month, min(per_month, left)))
        left -= per_month
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def _demo(demo: Path) -> dict:
    """The demo's texts, categories, names and institutions, read through the product's catalog."""
    from sqlmodel import select

    from retrieval.scholarly.catalog import Catalog
    from retrieval.scholarly.models import Institution, Researcher

    catalog = Catalog(f"sqlite:///{demo / 'scholarloom.db'}")
    papers = [p for p in catalog.iter_papers() if p.abstract and p.primary_category]
    with catalog.session() as session:
        names = [r.name for r in session.exec(select(Researcher)).all()]
        places = [(i.name, i.country_code) for i in session.exec(select(Institution)).all()]
    words = [n.split() for n in names if len(n.split()) >= 2]
    return {
        "papers": [(p.title, re.split(r"(?<=[.!?])\s+", p.abstract), p.categories, p.primary_category) for p in papers],
        "first": sorted({w[0] for w in words if w[0].isalpha()}),
        "last": sorted({w[-1] for w in words if w[-1].isalpha()}),
        "places": places or [("Synthetic University", "US")],
    }


def _skewed(rng: random.Random, n: int) -> int:
    """1..n, a few ids very often (a researcher with thousands of papers), most rarely."""
    return 1 + min(n - 1, int(n * rng.random() ** 2))


def build(args) -> dict:
    from sqlalchemy import insert

    from retrieval.scholarly.catalog import Catalog
    from retrieval.scholarly.models import Authorship, Citation, Institution, Paper, Researcher

    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    url = args.database_url or f"sqlite:///{work / 'data' / 'scholarloom.db'}"
    demo = _demo(args.demo)
    catalog = Catalog(url)
    rng = random.Random(7)
    started = time.perf_counter()
    n_researchers = args.papers * RESEARCHERS_PER_PAPER
    n_institutions = max(100, args.papers // 50)
    counts = {"papers": 0, "researchers": 0, "institutions": 0, "authorships": 0, "citations": 0}

    def write(table, rows: list[dict]) -> None:
        with catalog.engine.begin() as connection:
            connection.execute(insert(table), rows)
        counts[table.name] += len(rows)

    rows, seen = [], set()
    for i in range(1, n_institutions + 1):
        name, country = rng.choice(demo["places"])
        name = f"{name} {i}" if (name, country) in seen else name
        seen.add((name, country))
        rows.append(dict(id=i, name=name, country_code=country, aliases=[], acronyms=[], types=["education"],
                         parent_rors=[], child_rors=[], search_key=normalise_name(name)))  # fmt: skip
        if len(rows) == CHUNK:
            write(Institution.__table__, rows)
            rows = []
    if rows:
        write(Institution.__table__, rows)
    rows = []
    for i in range(1, n_researchers + 1):
        name = f"{rng.choice(demo['first'])} {chr(65 + i % 26)}. {rng.choice(demo['last'])}"
        key = normalise_name(name)
        rows.append(dict(id=i, identity_key=f"name:{key} {i}", name=name, name_key=key, aliases=[]))
        if len(rows) == CHUNK:
            write(Researcher.__table__, rows)
            rows = []
    if rows:
        write(Researcher.__table__, rows)
    papers, authorships, citations, ids = [], [], [], []
    for year, month, count in _months(args.papers):
        for k in range(1, count + 1):
            pid = f"{year % 100:02d}{month:02d}.{k:05d}"
            ids.append(pid)
            title, first, categories, primary = rng.choice(demo["papers"])
            _, second, _, _ = rng.choice(demo["papers"])
            abstract = " ".join(first[: max(1, len(first) // 2)] + second[len(second) // 2 :])
            published = datetime(year, month, 1, tzinfo=timezone.utc) + timedelta(days=rng.randrange(28))
            papers.append(dict(id=pid, arxiv_id=pid, title=title, title_key=title_key(title), abstract=abstract,
                               categories=categories, primary_category=primary, published=published,
                               updated=published, year=year,
                               version=1, topics=[], sources=["synthetic"], analysed=False,
                               all_authors_matched=True))  # fmt: skip
            for position in range(rng.randint(*AUTHORS_PER_PAPER)):
                researcher = _skewed(rng, n_researchers)
                institution = _skewed(rng, n_institutions) if rng.random() < 0.5 else None
                authorships.append(dict(paper_id=pid, position=position, raw_name=f"author {researcher}",
                                        researcher_id=researcher, match_method="name", match_confidence=1.0,
                                        institution_id=institution))  # fmt: skip
            for cited in {rng.choice(ids) for _ in range(CITATIONS_PER_PAPER)} - {pid}:
                citations.append(dict(citing_id=pid, cited_key=f"arxiv:{cited}", cited_id=cited,
                                      cited_arxiv_id=cited))  # fmt: skip
            if len(papers) == CHUNK:
                write(Paper.__table__, papers)
                write(Authorship.__table__, authorships)
                write(Citation.__table__, citations)
                papers, authorships, citations = [], [], []
                print(f"{counts['papers']:,} papers, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if papers:
        write(Paper.__table__, papers)
        write(Authorship.__table__, authorships)
        write(Citation.__table__, citations)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    catalog.recount()  # the rows were written around the ORM: the kept counts are made from them once
    recount_seconds = time.perf_counter() - started
    # The planner's statistics, as a database in use has them; on PostgreSQL also the visibility map a bulk load
    # leaves unset (autovacuum sets it in time; until then an index-only scan reads the table too), as an operator
    # runs after a bulk load (docs/operators.md).
    with catalog.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql("VACUUM ANALYZE" if catalog.engine.dialect.name == "postgresql" else "ANALYZE")
    catalog.engine.dispose()
    for name in ("qdrant", "models"):  # the demo's index (and its models, when it keeps them) serve the search routes
        if (args.demo / name).exists() and not (work / "data" / name).exists():
            (work / "data" / name).symlink_to((args.demo / name).resolve())
    return {"database": url.split(":", 1)[0], **counts, "build_s": round(seconds, 1),
            "recount_s": round(recount_seconds, 1)}  # fmt: skip


SURNAMES = ("smith", "wang", "garcia", "chen", "mueller", "kim", "rossi")  # common names: many researchers each
ROUTES = {
    # route kind -> how one address of it is made from a paper id, a researcher id, an institution id, n, and the
    # number of the last sitemap part of each kind
    "home": lambda p, r, i, n, last: "/",
    "paper page": lambda p, r, i, n, last: f"/papers/{p}",
    "paper page (markdown)": lambda p, r, i, n, last: f"/papers/{p}.md",
    "researcher page": lambda p, r, i, n, last: f"/researchers/{r}",
    "institution page": lambda p, r, i, n, last: f"/institutions/{i}",
    # The pager's links: cursors next to a paper anywhere in the archive (a keyset read, however deep).
    "all papers, deep page": lambda p, r, i, n, last: f"/papers?after={p}",
    "category listing, deep page": lambda p, r, i, n, last: f"/papers?category=cs.CL&after={p}",
    "category listing, deep page, newer": lambda p, r, i, n, last: f"/papers?category=cs.CL&before={p}",
    # A page asked for by its number (old links): the newest-first index walked from the top.
    "all papers, deep page by number": lambda p, r, i, n, last: f"/papers?page={1000 + 997 * n}",
    "researchers list": lambda p, r, i, n, last: f"/researchers?page={1 + n}",
    "researchers list, a name searched": lambda p, r, i, n, last: f"/researchers?q={SURNAMES[n % len(SURNAMES)]}",
    "institutions list": lambda p, r, i, n, last: f"/institutions?page={1 + n}",
    "sitemap index": lambda p, r, i, n, last: "/sitemap.xml",
    "sitemap part of papers, deep": lambda p, r, i, n, last: f"/sitemaps/papers-{last['papers'] - n % 3}.xml",
    "sitemap part of researchers, deep": lambda p, r, i, n, last: (
        f"/sitemaps/researchers-{last['researchers'] - n % 3}.xml"
    ),
    "RSS, a category": lambda p, r, i, n, last: "/rss/cs.CL.xml",
    "search page": lambda p, r, i, n, last: f"/search?q=graph+neural+networks+{n}",
    "/api/search": lambda p, r, i, n, last: f"/api/search?q=dialogue+state+tracking+{n}",
    "/api/papers": lambda p, r, i, n, last: f"/api/papers/{p}",
    "/api/researchers": lambda p, r, i, n, last: f"/api/researchers/{r}",
    "/api/institutions": lambda p, r, i, n, last: f"/api/institutions/{i}",
    "llms.txt": lambda p, r, i, n, last: "/llms.txt",
}


def _rss_mb(pid: int) -> float:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024


def pages(args) -> dict:
    import httpx
    from sqlmodel import func, select

    from retrieval.scholarly.catalog import Catalog
    from retrieval.scholarly.listings import sitemap_parts
    from retrieval.scholarly.models import Institution, Paper, Researcher
    from web.feeds import SITEMAP_PART

    url = args.database_url or f"sqlite:///{args.work / 'data' / 'scholarloom.db'}"
    started = time.perf_counter()
    catalog = Catalog(url)  # a catalog built by an older version is migrated here (timed), not in the server's start
    opened = time.perf_counter() - started
    rng = random.Random(11)
    with catalog.session() as session:
        n_papers = session.exec(select(func.count()).select_from(Paper)).one()
        last_researcher = session.exec(select(func.max(Researcher.id))).one()
        last_institution = session.exec(select(func.max(Institution.id))).one()
        paper_ids = [session.exec(select(Paper.id).offset(rng.randrange(n_papers)).limit(1)).one()
                     for _ in range(args.requests + 1)]  # fmt: skip
    last = {kind: len(sitemap_parts(catalog, kind, SITEMAP_PART)) for kind in ("papers", "researchers")}
    catalog.engine.dispose()
    env = {"SCHOLARLOOM_DATABASE_URL": args.database_url} if args.database_url else {}
    with served(args.work / "data", tree=ROOT, **env) as (base, process), httpx.Client(base_url=base, timeout=120,
                                                                          follow_redirects=True) as client:
        rows = {}
        for kind, address in ROUTES.items():
            if args.only and not any(o in kind for o in args.only):
                continue
            times, statuses = [], set()
            for n in range(args.requests + 1):
                path = address(paper_ids[n], _skewed(rng, last_researcher), _skewed(rng, last_institution), n, last)
                t = time.perf_counter()
                response = client.get(path, headers={"Accept": "text/html"})
                elapsed = (time.perf_counter() - t) * 1000
                statuses.add(response.status_code)
                if n:  # the first request of each kind warms it up
                    times.append(elapsed)
            ordered = sorted(times)
            p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
            rows[kind] = (statistics.median(ordered), p95, sorted(statuses))
            print(f"{kind}: p50 {rows[kind][0]:.0f} ms, p95 {p95:.0f} ms, status {sorted(statuses)}", file=sys.stderr)
        rss = _rss_mb(process.pid)
    return {"database": url.split(":", 1)[0], "papers": n_papers, "requests": args.requests, "routes": rows,
            "server_rss_mb": rss, "open_s": opened}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phase", choices=["build", "pages", "both"])
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL server for a `both` run")
    parser.add_argument("--work", type=Path, default=Path("/tmp/catalog-scale"))
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--demo", type=Path, default=ROOT / "data" / "local", help="a data directory with the demo")
    parser.add_argument("--database-url", help="PostgreSQL (an empty database); default SQLite in --work")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="route kinds whose names contain one of these words")
    args = parser.parse_args()
    server = None
    if args.postgres:
        from harness.postgres import PostgresServer

        if args.phase != "both":
            parser.error("--postgres runs `both` (its server lives for one run)")
        server = PostgresServer().start()
        args.database_url = server.new_database()
    try:
        if args.phase in ("build", "both"):
            built = build(args)
            print(json.dumps(built), file=sys.stderr if args.phase == "both" else sys.stdout)
        if args.phase in ("pages", "both"):
            _print_pages(pages(args))
    finally:
        if server is not None:
            server.close()


def _print_pages(result: dict) -> None:
    print(f"{result['papers']:,} papers ({result['database']}); ms p50 / p95 over {result['requests']} "
          "requests each\n\n| route | p50 | p95 | status |\n| --- | --- | --- | --- |")  # fmt: skip
    for kind, (p50, p95, statuses) in result["routes"].items():
        print(f"| {kind} | {p50:.0f} | {p95:.0f} | {', '.join(map(str, statuses))} |")
    print(f"\nserver RSS after the requests: {result['server_rss_mb']:.0f} MB; opening the catalog (migrating it "
          f"when it was older) took {result['open_s']:.1f} s")  # fmt: skip

if __name__ == "__main__":
    main()
