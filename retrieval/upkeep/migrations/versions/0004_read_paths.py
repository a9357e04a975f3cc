"""Read paths of a million-paper catalog. The sitemap's parts are cut by blocks of ids, each read from its own
range of an index: every paper gets its `id_block` (its id but the last four characters, indexed with the id), and
`catalog_counts` keeps how many of the sitemap's pages fall in each block of papers, researchers (ids by 10,000) and
institutions (its names may be longer than before: a block of long ids). A large institution's members, and the
fields of its papers, are read from indexes alone. Existing rows are counted once here (see BENCHMARKS.md for a
million papers).

Revision ID: 0004
Revises: 0003
Created: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

PEOPLE = ("researchers", "institutions")
PEOPLE_BLOCK = 10_000


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    with op.batch_alter_table("catalog_counts", schema=None) as batch_op:
        batch_op.alter_column("name", existing_type=sa.String(length=120), type_=sa.String(length=250),
                              existing_nullable=False)  # fmt: skip
    if "id_block" not in {column["name"] for column in inspector.get_columns("papers")}:
        with op.batch_alter_table("papers", schema=None) as batch_op:
            batch_op.add_column(sa.Column("id_block", sa.String(length=200), nullable=True))
        bind.execute(sa.text(
            "UPDATE papers SET id_block = CASE WHEN length(id) > 4 THEN substr(id, 1, length(id) - 4) ELSE '' END"
        ))  # fmt: skip
    op.create_index("ix_papers_id_block", "papers", ["id_block", "id"], unique=False, if_not_exists=True)
    # An institution's members and the fields of its papers, read from indexes alone.
    op.create_index("ix_papers_id_category", "papers", ["id", "primary_category"], unique=False, if_not_exists=True)
    op.create_index("ix_authorships_institution_members", "authorships",
                    ["institution_id", "researcher_id", "paper_id"], unique=False, if_not_exists=True)  # fmt: skip
    op.drop_index("ix_authorships_institution_id", table_name="authorships", if_exists=True)
    # The blocks counted from the rows (the SQL of `retrieval.scholarly.counts._block_counts`, frozen here).
    bind.execute(sa.text("DELETE FROM catalog_counts WHERE name LIKE 'block:%'"))
    counts = {f"block:papers:{block}": n for block, n in
              bind.execute(sa.text("SELECT id_block, count(*) FROM papers GROUP BY id_block")).all()}  # fmt: skip
    for table in PEOPLE:
        rows = bind.execute(sa.text(
            f"SELECT id / {PEOPLE_BLOCK}, count(*) FROM {table} WHERE paper_count > 0 GROUP BY id / {PEOPLE_BLOCK}"
        )).all()  # fmt: skip
        counts.update({f"block:{table}:{int(block)}": n for block, n in rows})
    if counts:
        bind.execute(sa.text("INSERT INTO catalog_counts (name, value) VALUES (:name, :value)"),
                     [{"name": name, "value": value} for name, value in counts.items()])  # fmt: skip


def downgrade() -> None:
    op.execute("DELETE FROM catalog_counts WHERE name LIKE 'block:%'")
    op.create_index("ix_authorships_institution_id", "authorships", ["institution_id"], unique=False)
    op.drop_index("ix_authorships_institution_members", table_name="authorships")
    op.drop_index("ix_papers_id_category", table_name="papers")
    op.drop_index("ix_papers_id_block", table_name="papers")
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.drop_column("id_block")
    with op.batch_alter_table("catalog_counts", schema=None) as batch_op:
        batch_op.alter_column("name", existing_type=sa.String(length=250), type_=sa.String(length=120),
                              existing_nullable=False)  # fmt: skip
