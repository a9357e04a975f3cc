"""What session 36 added, and a repair.

- `question_changes.judgement`: in LLM mode, what the model said the new evidence does to the earlier answer, and
  `saved_questions.best`, a question's best cosine (`retrieval/library/watches.py`);
- `ix_ingest_ledger_stage_at`: the ledger by stage and time (`Catalog.ledger_since`: a run of the saved questions
  looks at the papers indexed since the last one);
- `zotero_items.joined`: whether the sync put the item's paper in the library;
- `ix_papers_doi_lower`: papers found by DOI in lower case from an index;
- the repair: a database made by an early copy of 0012 (two commits of session 35 carried one) lacks
  `saved_questions.cited` and the digests' table.

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
    op.create_index("ix_papers_doi_lower", "papers", [sa.text("lower(doi)")], unique=False, if_not_exists=True)
    op.create_index("ix_ingest_ledger_stage_at", "ingest_ledger", ["stage", "at"], unique=False, if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_papers_doi_lower", table_name="papers")
    with op.batch_alter_table("zotero_items") as batch:
        batch.drop_column("joined")
    op.drop_index("ix_ingest_ledger_stage_at", table_name="ingest_ledger")
    with op.batch_alter_table("saved_questions") as batch:
        batch.drop_column("best")
    with op.batch_alter_table("question_changes") as batch:
        batch.drop_column("judgement")
