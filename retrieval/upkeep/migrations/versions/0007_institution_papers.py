"""Each institution's papers with their dates and categories beside them (`institution_papers`), so an institution's
page reads its papers newest first, and counts its fields, from one range of an index. On PostgreSQL at a million
papers the page looked each of an institution's papers up in the papers' indexes (tens of thousands at a large one):
239 ms at p95 from a cold cache (BENCHMARKS.md). Filled here from the authorships and papers in one statement; kept
from now on as they are written (`retrieval.scholarly.counts`).

Revision ID: 0007
Revises: 0006
Created: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_NEWEST = [sa.text("(published IS NULL)"), sa.text("published DESC"), sa.text("year DESC"), "paper_id"]


def upgrade() -> None:
    bind = op.get_bind()
    if "institution_papers" not in sa.inspect(bind).get_table_names():
        op.create_table(
            "institution_papers",
            sa.Column("institution_id", sa.Integer(), nullable=False),
            sa.Column("paper_id", sa.String(length=200), nullable=False),
            sa.Column("published", sa.DateTime(timezone=True), nullable=True),
            sa.Column("year", sa.Integer(), nullable=True),
            sa.Column("primary_category", sa.String(length=200), nullable=True),
            sa.PrimaryKeyConstraint("institution_id", "paper_id"),
        )
    bind.execute(sa.text("DELETE FROM institution_papers"))
    bind.execute(sa.text(
        "INSERT INTO institution_papers (institution_id, paper_id, published, year, primary_category) "
        "SELECT DISTINCT a.institution_id, p.id, p.published, p.year, p.primary_category "
        "FROM authorships a JOIN papers p ON p.id = a.paper_id WHERE a.institution_id IS NOT NULL"
    ))  # fmt: skip
    op.create_index("ix_institution_papers_paper_id", "institution_papers", ["paper_id"], unique=False,
                    if_not_exists=True)  # fmt: skip
    # (the expression indexes are not reflected by SQLAlchemy: `if_not_exists` lets a database that has them be)
    op.create_index("ix_institution_papers_newest", "institution_papers",
                    ["institution_id", *_NEWEST], unique=False, if_not_exists=True)  # fmt: skip
    op.create_index("ix_institution_papers_category", "institution_papers",
                    ["institution_id", "primary_category", *_NEWEST], unique=False,
                    if_not_exists=True)  # fmt: skip


def downgrade() -> None:
    op.drop_table("institution_papers")
