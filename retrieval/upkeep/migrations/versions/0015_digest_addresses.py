"""Digest addresses checked (security round four): `digest_subscriptions.confirmed_at`, when the address confirmed
it wants the digests (none are mailed before: double opt-in), and `notice`, why they were switched off
(`retrieval/library/digests.py`).

Every address stored before is checked as a new one is (`common.mail.checked_address`; one such address stopped
every user's digests): one that passes was in use, and counts as confirmed when it was given; one that fails is
switched off with a notice its owner reads on their saved-questions page.

Revision ID: 0015
Revises: 0014
Created: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

from common.mail import checked_address

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

NOTICE = ("The address your digests went to is not one this server can send to safely any more, so they were "
          "switched off: give your address again to have them back.")  # fmt: skip


def _checked(email: str) -> str | None:
    try:
        return checked_address(email)
    except ValueError:
        return None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("digest_subscriptions")}
    if "confirmed_at" not in columns:
        op.add_column("digest_subscriptions", sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True))
    if "notice" not in columns:
        op.add_column("digest_subscriptions", sa.Column("notice", sa.String(length=300), nullable=True))
    if "confirmed_at" in columns:  # the columns were there: this revision's work is done
        return
    table = sa.table("digest_subscriptions", sa.column("id", sa.Integer()), sa.column("email", sa.String()),
                     sa.column("created_at", sa.DateTime(timezone=True)),
                     sa.column("confirmed_at", sa.DateTime(timezone=True)),
                     sa.column("notice", sa.String()))  # fmt: skip
    bind = op.get_bind()
    for key, email, created_at in bind.execute(sa.select(table.c.id, table.c.email, table.c.created_at)).all():
        address = _checked(email or "")
        found = {"email": address, "confirmed_at": created_at} if address else {"notice": NOTICE}
        bind.execute(table.update().where(table.c.id == key).values(**found))


def downgrade() -> None:
    # Before this revision every row got digests: those never confirmed (or switched off) go.
    op.execute("DELETE FROM digest_subscriptions WHERE confirmed_at IS NULL")
    with op.batch_alter_table("digest_subscriptions") as batch:
        batch.drop_column("notice")
        batch.drop_column("confirmed_at")
