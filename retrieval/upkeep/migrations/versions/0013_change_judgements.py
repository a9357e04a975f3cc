"""A saved question's change keeps, in LLM mode, what the model said the new evidence does to the earlier answer
(`question_changes.judgement`), and a question its best cosine (`saved_questions.best`: `retrieval/library/
watches.py`); the ledger is indexed by stage and time (`Catalog.ledger_since`: a run of the saved questions looks at
the papers indexed since the last one); a Zotero item, whether its sync put its paper in the library
(`zotero_items.joined`). Also repairs a database made by an early copy of
0012 (two commits of session 35 carried one): without `saved_questions.cited` and the digests' table.

Revision ID: 0013
Revises: 0012
Created: 2026-12-05
"""

import importlib.util
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def _columns(table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def _revision_0012():
    spec = importlib.util.spec_from_file_location("revision_0012", Path(__file__).with_name("0012_saved_questions.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def upgrade() -> None:
    _revision_0012().upgrade()  # it makes the tables and indexes it finds missing
    if "cited" not in _columns("saved_questions"):
        op.add_column("saved_questions", sa.Column("cited", sa.JSON(), nullable=False, server_default="{}"))
    if "judgement" not in _columns("question_changes"):
        op.add_column("question_changes", sa.Column("judgement", sa.JSON(), nullable=True))
    if "best" not in _columns("saved_questions"):
        op.add_column("saved_questions", sa.Column("best", sa.Float(), nullable=True))
    if "joined" not in _columns("zotero_items"):  # (existing items: as before, their deletion takes the paper)
        op.add_column("zotero_items", sa.Column("joined", sa.Boolean(), nullable=False, server_default=sa.true()))
    op.create_index("ix_ingest_ledger_stage_at", "ingest_ledger", ["stage", "at"], unique=False, if_not_exists=True)


def downgrade() -> None:
    with op.batch_alter_table("zotero_items") as batch:
        batch.drop_column("joined")
    op.drop_index("ix_ingest_ledger_stage_at", table_name="ingest_ledger")
    with op.batch_alter_table("saved_questions") as batch:
        batch.drop_column("best")
    with op.batch_alter_table("question_changes") as batch:
        batch.drop_column("judgement")
