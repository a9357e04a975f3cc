"""A researcher's paper count beside its search terms: `researcher_terms.papers`, indexed with the term, so the
researchers who have a word of a searched name come most papers first from one range of that index, whatever the
database's planner estimates (on PostgreSQL at three million researchers, a common surname took 466 ms at p95 by
joining the terms to the researchers and sorting; BENCHMARKS.md). Filled here from `researchers.paper_count` in one
statement; kept from now on where that count is kept. A researcher's terms are also indexed by researcher, as
rewriting or recounting them reads them (it read the whole table).

Revision ID: 0006
Revises: 0005
Created: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if "papers" not in {column["name"] for column in inspector.get_columns("researcher_terms")}:
        op.add_column("researcher_terms", sa.Column("papers", sa.Integer(), nullable=False, server_default="0"))
    # UPDATE ... FROM: PostgreSQL, and SQLite since 3.33; only the researchers with papers (most terms stay 0)
    bind.execute(sa.text(
        "UPDATE researcher_terms SET papers = researchers.paper_count FROM researchers "
        "WHERE researchers.id = researcher_terms.researcher_id AND researchers.paper_count > 0"
    ))  # fmt: skip
    # (a DESC column makes it an expression index, which SQLAlchemy does not reflect: the database skips it if there)
    op.create_index("ix_researcher_terms_most_papers", "researcher_terms", ["term", sa.text("papers DESC"),
                    "researcher_id"], unique=False, if_not_exists=True)  # fmt: skip
    op.create_index("ix_researcher_terms_researcher", "researcher_terms", ["researcher_id"], unique=False,
                    if_not_exists=True)  # fmt: skip


def downgrade() -> None:
    op.drop_index("ix_researcher_terms_researcher", table_name="researcher_terms")
    op.drop_index("ix_researcher_terms_most_papers", table_name="researcher_terms")
    with op.batch_alter_table("researcher_terms") as batch_op:
        batch_op.drop_column("papers")
