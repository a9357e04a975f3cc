"""Counts kept as the catalog is written: each researcher's and institution's papers (`paper_count`, indexed with
the name for the "most papers" lists) and the `catalog_counts` table (totals and papers per primary category), so
pages of a million-paper archive never count a table; and the newest-first order of every paper and of each primary
category in an index of its own. Existing rows are counted once here (see BENCHMARKS.md for a million papers).

Revision ID: 0003
Revises: 0002
Created: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

PEOPLE = (("researchers", "researcher_id"), ("institutions", "institution_id"))
TOTALS = ("papers", "researchers", "institutions", "authorships", "citations")


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    for table, _ in PEOPLE:
        if "paper_count" not in {column["name"] for column in inspector.get_columns(table)}:
            with op.batch_alter_table(table, schema=None) as batch_op:
                batch_op.add_column(sa.Column("paper_count", sa.Integer(), nullable=False, server_default="0"))
        op.create_index(f"ix_{table}_most_papers", table, [sa.text("paper_count DESC"), "name"], unique=False,
                        if_not_exists=True)  # fmt: skip
    # (expression indexes: SQLAlchemy does not reflect them, so the database is asked to skip what it has)
    newest = [sa.text("(published IS NULL)"), sa.text("published DESC"), sa.text("year DESC"), "id"]
    op.create_index("ix_papers_newest", "papers", newest, unique=False, if_not_exists=True)
    op.create_index("ix_papers_category_newest", "papers", ["primary_category", *newest], unique=False,
                    if_not_exists=True)  # fmt: skip
    if "catalog_counts" not in inspector.get_table_names():
        op.create_table(
            "catalog_counts",
            sa.Column("name", sa.String(length=120), nullable=False),
            sa.Column("value", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("name"),
        )
    # Every count from the rows, once (the SQL of `retrieval.scholarly.counts.recount_all`, frozen here).
    for table, column in PEOPLE:
        bind.execute(sa.text(
            f"UPDATE {table} SET paper_count = (SELECT count(DISTINCT paper_id) FROM authorships "
            f"WHERE authorships.{column} = {table}.id)"
        ))  # fmt: skip
    bind.execute(sa.text("DELETE FROM catalog_counts"))
    counts = {name: bind.execute(sa.text(f"SELECT count(*) FROM {name}")).scalar_one() for name in TOTALS}
    for table, _ in PEOPLE:
        counts[f"{table}_with_papers"] = bind.execute(
            sa.text(f"SELECT count(*) FROM {table} WHERE paper_count > 0")
        ).scalar_one()
    categories = bind.execute(sa.text(
        "SELECT primary_category, count(*) FROM papers WHERE primary_category IS NOT NULL GROUP BY primary_category"
    )).all()  # fmt: skip
    counts.update({f"category:{category}": n for category, n in categories})
    if counts:
        bind.execute(sa.text("INSERT INTO catalog_counts (name, value) VALUES (:name, :value)"),
                     [{"name": name, "value": value} for name, value in counts.items()])  # fmt: skip


def downgrade() -> None:
    op.drop_table("catalog_counts")
    op.drop_index("ix_papers_category_newest", table_name="papers")
    op.drop_index("ix_papers_newest", table_name="papers")
    for table, _ in PEOPLE:
        op.drop_index(f"ix_{table}_most_papers", table_name=table)
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("paper_count")
