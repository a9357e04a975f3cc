"""A citation edge keeps what the citing paper's own reference list says of the work: its authors, year and venue,
and the entry as printed (`ingest.references`); a work the list names without an arXiv id or DOI gets an edge of
its own (key `ref:...`), so a paper's page lists every entry of its list, not only those with an id.

Revision ID: 0008
Revises: 0007
Created: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_COLUMNS = [
    sa.Column("cited_authors", sa.String(), nullable=True),
    sa.Column("cited_year", sa.Integer(), nullable=True),
    sa.Column("cited_venue", sa.String(), nullable=True),
    sa.Column("reference", sa.String(), nullable=True),
]


def upgrade() -> None:
    have = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("citations")}
    for column in _COLUMNS:
        if column.name not in have:
            op.add_column("citations", column)


def downgrade() -> None:
    for column in _COLUMNS:
        op.drop_column("citations", column.name)
