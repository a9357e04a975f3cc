"""Saved questions, the changes their runs found, and e-mail digests of them (`retrieval/library/watches.py`).

Revision ID: 0012
Revises: 0011
Created: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

META = sa.MetaData()

sa.Table(
    "saved_questions",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("query", sa.String(length=300), nullable=False),
    sa.Column("scope", sa.String(length=60), nullable=False),
    sa.Column("seen", sa.JSON(), nullable=False),
    sa.Column("cited", sa.JSON(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint("id"),
)
sa.Table(
    "question_changes",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("question_id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("papers", sa.JSON(), nullable=False),
    sa.Column("read", sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint("id"),
)
sa.Table(
    "digest_subscriptions",
    META,
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("owner", sa.String(length=200), nullable=False),
    sa.Column("email", sa.String(length=254), nullable=False),
    sa.Column("every", sa.String(length=10), nullable=False),
    sa.Column("nonce", sa.String(length=32), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("last_sent_at", sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint("id"),
)
INDEXES = [
    ("ix_saved_questions_owner", "saved_questions", ["owner"]),
    ("ix_question_changes_question_id", "question_changes", ["question_id"]),
    ("ix_question_changes_owner", "question_changes", ["owner"]),
    ("ix_digest_subscriptions_owner", "digest_subscriptions", ["owner"], True),
]


def upgrade() -> None:
    bind = op.get_bind()
    present = set(sa.inspect(bind).get_table_names())
    for table in META.sorted_tables:
        if table.name not in present:
            table.create(bind)
    for name, table, columns, *unique in INDEXES:
        if name not in {index["name"] for index in sa.inspect(bind).get_indexes(table)}:
            op.create_index(name, table, columns, unique=bool(unique))


def downgrade() -> None:
    for name, table, *_ in INDEXES:
        op.drop_index(name, table_name=table)
    for table in reversed(META.sorted_tables):
        op.drop_table(table.name)
