"""Alembic's environment and the revisions of the one database ScholarLoom keeps: the catalog, the accounts and
the chat history (see `retrieval/upkeep/schema.py`, which runs them)."""
