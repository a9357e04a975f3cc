"""Zotero libraries connected by users, the items a sync took from each, and named reading lists (a Zotero
collection each, or the user's own): `retrieval/library/zotero.py`.

Revision ID: 0011
Revises: 0010
Created: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

META = sa.MetaData()

sa.Table(
    "zotero_libraries",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("kind", sa.String(length=10), nullable=False),
    sa.Column("library_id", sa.String(length=20), nullable=False),
    sa.Column("source", sa.String(length=10), nullable=False),
    sa.Column("sealed_key", sa.String(length=400), nullable=False),
    sa.Column("name", sa.String(length=200), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("state", sa.String(length=20), nullable=False),
    sa.Column("last_error", sa.String(length=1000), nullable=True),
    sa.Column("last_synced_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("owner", "kind", "library_id", "source"),
)
sa.Table(
    "zotero_items",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("library", sa.Integer(), nullable=False),
    sa.Column("key", sa.String(length=20), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("paper_id", sa.String(length=200), nullable=True),
    sa.Column("upload_id", sa.Integer(), nullable=True),
    sa.Column("md5", sa.String(length=32), nullable=True),
    sa.Column("parent", sa.String(length=20), nullable=True),
    sa.Column("collections", sa.JSON(), nullable=False),
    sa.Column("label", sa.String(length=300), nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("library", "key"),
)
sa.Table(
    "library_lists",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("name", sa.String(length=300), nullable=False),
    sa.Column("zotero_library", sa.Integer(), nullable=True),
    sa.Column("collection_key", sa.String(length=20), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("owner", "zotero_library", "collection_key"),
)
sa.Table(
    "library_list_papers",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("list_id", sa.Integer(), nullable=False),
    sa.Column("paper_id", sa.String(length=200), nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("list_id", "paper_id"),
)
INDEXES = [
    ("ix_zotero_libraries_owner", "zotero_libraries", ["owner"]),
    ("ix_zotero_items_library", "zotero_items", ["library"]),
    ("ix_library_lists_owner", "library_lists", ["owner"]),
    ("ix_library_list_papers_list_id", "library_list_papers", ["list_id"]),
]


def upgrade() -> None:
    bind = op.get_bind()
    present = set(sa.inspect(bind).get_table_names())
    for table in META.sorted_tables:
        if table.name not in present:
            table.create(bind)
    for name, table, columns in INDEXES:
        if name not in {index["name"] for index in sa.inspect(bind).get_indexes(table)}:
            op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _ in INDEXES:
        op.drop_index(name, table_name=table)
    for table in reversed(META.sorted_tables):
        op.drop_table(table.name)
