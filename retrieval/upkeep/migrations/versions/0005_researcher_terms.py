"""Researchers found without reading every name: `researcher_terms` holds each word of a researcher's normalised name
(`w:<word>`) and each of its other names, normalised (`a:<name>`), read by an index when a page or a tool looks for
a partial name (at three million researchers, reading every name took seconds). Filled here from the rows, in
batches by id, by the rules of `retrieval.scholarly.terms` as they are today (frozen here; see BENCHMARKS.md for a
million papers); kept from now on as researchers are written.

Revision ID: 0005
Revises: 0004
Created: 2026-12-04
"""

import json
import re
import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BATCH = 50_000


def _normal(name: str) -> str:
    text = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def _terms(name_key: str | None, aliases) -> set[str]:
    if isinstance(aliases, str):
        aliases = json.loads(aliases or "[]")
    found = {f"w:{w}" for w in (name_key or "").split()}
    found |= {f"a:{_normal(a)}" for a in aliases or [] if isinstance(a, str) and _normal(a)}
    return {t for t in found if len(t) <= 250}


def upgrade() -> None:
    bind = op.get_bind()
    if "researcher_terms" not in sa.inspect(bind).get_table_names():
        op.create_table(
            "researcher_terms",
            sa.Column("term", sa.String(length=250), nullable=False),
            sa.Column("researcher_id", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("term", "researcher_id"),
        )
    bind.execute(sa.text("DELETE FROM researcher_terms"))
    insert = sa.text("INSERT INTO researcher_terms (term, researcher_id) VALUES (:term, :researcher_id)")
    last = 0
    while rows := bind.execute(sa.text("SELECT id, name_key, aliases FROM researchers WHERE id > :last ORDER BY id "
                                       "LIMIT :batch"), {"last": last, "batch": BATCH}).all():  # fmt: skip
        terms = [{"term": t, "researcher_id": i} for i, key, aliases in rows for t in sorted(_terms(key, aliases))]
        if terms:
            bind.execute(insert, terms)
        last = rows[-1][0]


def downgrade() -> None:
    op.drop_table("researcher_terms")
