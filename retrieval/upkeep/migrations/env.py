"""Alembic's environment: always on the connection `retrieval.upkeep.schema` hands over (never a URL from an ini file).
Batch mode lets SQLite alter a table by copying it, as Alembic's SQLite notes advise."""

from alembic import context

config = context.config


def render_item(kind, item, _context):
    """SQLModel's column types written as SQLAlchemy's in a new revision, so revisions import nothing of the models
    (what they store is the same: SQLModel's types only decorate these)."""
    if kind == "type" and type(item).__module__.startswith("sqlmodel"):
        if type(item).__name__ == "AutoString":
            return f"sa.String(length={item.length})" if item.length else "sa.String()"
        if type(item).__name__ == "UTCDateTime":
            return "sa.DateTime(timezone=True)"
    return False


context.configure(
    connection=config.attributes["connection"],
    target_metadata=config.attributes.get("target_metadata"),
    render_as_batch=True,
    compare_type=True,
    render_item=render_item,
)
with context.begin_transaction():
    context.run_migrations()
