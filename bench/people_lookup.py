"""How long finding the people a query names takes (`retrieval.search.people_first.named_people`, asked by every
search before anything else), on a catalog of any size: queries with a full name, a first name and surname without
the middle names, initials, capitalised words that name nobody ("Semantic Scholar", title case) and none at all.

    .venv/bin/python -m bench.catalog_scale build --papers 1000000 --work /tmp/catalog-1m
    .venv/bin/python -m bench.people_lookup --data-dir /tmp/catalog-1m/data [--repeat 20]

Prints, per query, who it named and the median and 95th percentile of the lookup in milliseconds (after one warm-up
call each), and the researchers in the catalog.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from sqlmodel import func, select

from retrieval.scholarly.models import Researcher
from retrieval.search.people_first import named_people
from scholarloom.settings import Settings

QUERIES = (
    "papers by Matthew Peters",  # a full name, and the same name with middle names
    "papers by Joseph Hellerstein",  # first name and surname, the middle initial left out
    "J. M. Hellerstein on provenance",  # initials
    "How many author nodes are in the Semantic Scholar literature graph?",  # capitalised words naming nobody
    "Graph Neural Networks for Molecular Property Prediction",  # a title in title case
    "prompt injection attacks on LLM applications",  # no name
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path("data/local"))
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    catalog = settings.catalog()
    with catalog.session() as session:
        print(f"{session.exec(select(func.count()).select_from(Researcher)).one():,} researchers\n")
    print("| query | named | p50 ms | p95 ms |\n| --- | --- | --- | --- |")
    for query in QUERIES:
        named = named_people(catalog, query)
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            named_people(catalog, query)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"| {query} | {len(named.researchers) if named else 0} | {statistics.median(times):.2f} | {p95:.2f} |")
    settings.close()


if __name__ == "__main__":
    main()
