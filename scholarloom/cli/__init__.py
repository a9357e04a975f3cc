"""The `scholarloom` command: ingest, serve, users, models, bench, jobs, doctor, db, settings."""

# Each registers its commands on `app`.
from scholarloom.cli import admin, doctor, harvest, ingest, mcp, reference, run, store  # noqa: F401
from scholarloom.cli.common import app

__all__ = ["app"]
