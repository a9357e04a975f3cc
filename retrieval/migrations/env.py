"""Alembic's environment: always on the connection `retrieval.schema` hands over (never a URL from an ini file).
Batch mode lets SQLite alter a table by copying it, as Alembic's SQLite notes advise."""

from alembic import context

config = context.config
context.configure(
    connection=config.attributes["connection"],
    target_metadata=config.attributes.get("target_metadata"),
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
