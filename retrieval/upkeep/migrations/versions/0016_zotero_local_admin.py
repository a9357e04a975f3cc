"""The Zotero desktop's local API for admins only (security round four, issue 66): the desktop on the server's
machine holds its owner's library, yet any signed-in user could connect it. From now on only an admin may connect or
sync it (`web.zotero`, `jobs.zotero`); a connection someone else made before is switched off here, with a notice on
their /me/zotero (state "off", the reason as its last error). What it brought stays in their library; the rows of
admins, and every zotero.org library, are left as they were.

Revision ID: 0016
Revises: 0015
Created: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# `jobs.zotero.ADMINS_ONLY` as this revision wrote it (a revision does not follow later code)
NOTICE = ("Only an admin may sync the Zotero desktop of this server, so this library is switched off: connect your "
          "library at zotero.org with a key instead.")  # fmt: skip


def upgrade() -> None:
    # an admin is an active account with is_admin true (null is false), as `auth.accounts.is_admin` reads it
    op.get_bind().execute(
        sa.text("UPDATE zotero_libraries SET state = 'off', last_error = :notice WHERE source = 'local' AND owner "
                "NOT IN (SELECT username FROM accounts WHERE is_admin = :yes AND active = :yes)"),
        {"notice": NOTICE, "yes": True},
    )  # fmt: skip


def downgrade() -> None:
    pass  # a library switched off stays off: connecting it again (as an admin) switches it on
