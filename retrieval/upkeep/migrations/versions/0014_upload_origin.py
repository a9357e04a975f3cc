"""Where an upload came from when no person uploaded it: `uploads.origin` (`zotero:<library>:<item key>` for a
PDF a Zotero sync stored; `retrieval/library/uploads.py`). A sync that stopped half way left an upload no item
records (an older version of a PDF it replaced); the next sync finds it by its origin and deletes it.

Revision ID: 0014
Revises: 0013
Created: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "origin" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("uploads")}:
        op.add_column("uploads", sa.Column("origin", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("uploads") as batch:
        batch.drop_column("origin")
