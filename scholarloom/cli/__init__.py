"""The `scholarloom` command: ingest, serve, users, models, bench, jobs, doctor."""

from scholarloom.cli import admin, doctor, harvest, ingest, run  # noqa: F401 - each registers its commands on `app`
from scholarloom.cli.common import app

__all__ = ["app"]
