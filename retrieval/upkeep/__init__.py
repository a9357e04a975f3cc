"""The archive's upkeep: the database engine and its locks, the schema's history (Alembic), backups."""
