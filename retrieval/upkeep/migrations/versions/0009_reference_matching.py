"""A reference listed by its title alone finds the paper it names, and an arriving paper finds the edges waiting for
it: `papers.title_key` and `citations.cited_title_key` (a title folded: lower case, no accents or punctuation), the
edges' arXiv ids, DOIs (now kept in lower case) and title keys indexed (`retrieval.scholarly.upsert.link_cited`);
and `citations.cited_title_source`, whose title an edge holds (a bibliographic source's replaces a PDF list's).
The keys are filled here, in batches; the next catalog finish reads every unlinked edge again (the ledger's
"relink" note), so edges already stored are matched by the new rule too.

Revision ID: 0009
Revises: 0008
Created: 2026-12-05
"""

import re
import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_BATCH = 5000


def _title_key(title):
    """`retrieval.scholarly.models.title_key` as this revision wrote it (a revision does not follow later code)."""
    text = unicodedata.normalize("NFKD", title or "")
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    key = " ".join(re.sub(r"[^\w\s]", " ", text.lower()).replace("_", " ").split())[:300]
    return key if len(key) >= 16 and key.count(" ") >= 2 else None


def _fill(bind, table: str, key_column: str, title_column: str) -> None:
    """Each row's title key, read and written a batch at a time in the order of the primary key."""
    last = None
    id_column = "id"
    while True:
        after, params = ("", {}) if last is None else (f" WHERE {id_column} > :last", {"last": last})
        rows = bind.execute(sa.text(f"SELECT {id_column}, {title_column} FROM {table}{after} "
                                    f"ORDER BY {id_column} LIMIT {_BATCH}"), params).all()  # fmt: skip
        if not rows:
            return
        keyed = [{"id": row[0], "key": _title_key(row[1])} for row in rows if row[1]]
        if keyed:
            bind.execute(sa.text(f"UPDATE {table} SET {key_column} = :key WHERE {id_column} = :id"), keyed)
        last = rows[-1][0]


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if "title_key" not in {c["name"] for c in inspector.get_columns("papers")}:
        op.add_column("papers", sa.Column("title_key", sa.String(), nullable=True))
    have = {c["name"] for c in inspector.get_columns("citations")}
    for name in ("cited_title_key", "cited_title_source"):
        if name not in have:
            op.add_column("citations", sa.Column(name, sa.String(), nullable=True))
    # whose title each edge holds: a list's entry (it has the entry as printed) or the record that listed it
    bind.execute(sa.text("UPDATE citations SET cited_title_source = CASE WHEN reference IS NOT NULL THEN 'pdf' "
                         "ELSE 'record' END WHERE cited_title IS NOT NULL AND cited_title_source IS NULL"))  # fmt: skip
    _fill(bind, "papers", "title_key", "title")
    _fill(bind, "citations", "cited_title_key", "cited_title")
    bind.execute(sa.text("UPDATE citations SET cited_doi = lower(cited_doi) WHERE cited_doi <> lower(cited_doi)"))
    op.create_index("ix_papers_title_key", "papers", ["title_key"], unique=False, if_not_exists=True)
    for name, column in (("ix_citations_cited_arxiv", "cited_arxiv_id"), ("ix_citations_cited_doi", "cited_doi"),
                         ("ix_citations_cited_title_key", "cited_title_key")):  # fmt: skip
        op.create_index(name, "citations", [column, "cited_id"], unique=False, if_not_exists=True)
    bind.execute(sa.text("UPDATE ingest_ledger SET content_hash = 'relink' "
                         "WHERE stage = 'finish' AND key = 'catalog'"))  # fmt: skip


def downgrade() -> None:
    for name in ("ix_citations_cited_title_key", "ix_citations_cited_doi", "ix_citations_cited_arxiv"):
        op.drop_index(name, "citations")
    op.drop_index("ix_papers_title_key", "papers")
    op.drop_column("citations", "cited_title_source")
    op.drop_column("citations", "cited_title_key")
    op.drop_column("papers", "title_key")
