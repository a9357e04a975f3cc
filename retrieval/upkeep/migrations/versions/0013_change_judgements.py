"""A saved question's change keeps, in LLM mode, what the model said the new evidence does to the earlier answer
(`question_changes.judgement`: `retrieval/library/watches.py`).

Revision ID: 0013
Revises: 0012
Created: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "judgement" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("question_changes")}:
        op.add_column("question_changes", sa.Column("judgement", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("question_changes") as batch:
        batch.drop_column("judgement")
