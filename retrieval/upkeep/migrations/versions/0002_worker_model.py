"""Job workers keep their model's line: every `serve` process says what its language model can do in its row, so
an admin reading any server's /admin/jobs sees every server's model.

Revision ID: 0002
Revises: 0001
Created: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "model" in {column["name"] for column in sa.inspect(op.get_bind()).get_columns("job_workers")}:
        return  # a database whose tables were made from the newer models, then adopted: nothing to add
    with op.batch_alter_table("job_workers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model", sa.String(length=1000), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("job_workers", schema=None) as batch_op:
        batch_op.drop_column("model")
