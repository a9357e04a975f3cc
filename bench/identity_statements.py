"""How many SQL statements a batch of name-only records costs, and how many of them look researchers up.

    .venv/bin/python -m bench.identity_statements [--records 200]

A fresh SQLite catalog on /dev/shm gets six papers that give every name a candidate (two identified namesakes, a
co-author, a stranger), then one batch (`ingest.pipeline.load_records`) of `--records` papers of four authors each
(two new names a paper, two that recur), counted with a statement listener. Run it from a checkout of another
commit to compare (BENCHMARKS.md, "The catalog at scale").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import event  # noqa: E402

from ingest.pipeline import load_records  # noqa: E402
from ingest.report import Summary  # noqa: E402
from retrieval.scholarly.catalog import Catalog  # noqa: E402
from retrieval.scholarly.records import AuthorRecord, PaperRecord  # noqa: E402


def paper(n: int, *authors: AuthorRecord | str) -> PaperRecord:
    """An arXiv record `2301.<n>` by these authors (a name alone, or an `AuthorRecord` with ids)."""
    people = [a if isinstance(a, AuthorRecord) else AuthorRecord(name=a) for a in authors]
    return PaperRecord(id=f"2301.{n:05d}", arxiv_id=f"2301.{n:05d}", title=f"Paper {n}", authors=people,
                       source="arxiv_api")  # fmt: skip


# Two identified researchers named Wei Wang arrive in one batch; a name-only "Wei Wang" beside Bob Jones is the one
# who wrote with Bob Jones earlier in the same batch; one beside a stranger cannot be told apart (both namesake rows
# of that kind share one researcher); Ada, alone with her name, is one person throughout. (Also the records of
# `tests/ingest/test_identity_batches.py`.)
NAMESAKES = [
    paper(1, AuthorRecord(name="Wei Wang", openalex_id="A1"), "Alice Smith"),
    paper(2, AuthorRecord(name="Wei Wang", openalex_id="A2"), "Bob Jones"),
    paper(3, "Wei Wang", "Bob Jones", "Ada Byron"),
    paper(4, "Wei Wang", "Carol Stranger"),
    paper(5, "Wei Wang", "Carol Stranger", "Ada Byron"),
    paper(6, "Ada Byron", "Bob Jones"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as folder:
        catalog = Catalog(f"sqlite:///{folder}/catalog.db")
        load_records(catalog, "arxiv_api", NAMESAKES, Summary())
        batch = [paper(100 + n, "Ada Byron", f"Person {n}", f"Person {n + 1}", "Wei Wang")
                 for n in range(args.records)]  # fmt: skip
        said: list[str] = []
        event.listen(catalog.engine, "before_cursor_execute", lambda *a: said.append(a[2]))
        load_records(catalog, "arxiv_api", batch, Summary())
        catalog.close()

    def selects(table: str) -> int:
        return sum(1 for s in said if s.lstrip().upper().startswith("SELECT") and f"FROM {table}" in s)

    print(f"{args.records} records, {4 * args.records} authors: {len(said):,} statements, "
          f"{selects('researchers'):,} SELECTs on researchers, {selects('authorships'):,} on authorships")  # fmt: skip


if __name__ == "__main__":
    main()
