"""The settings reference (`docs/settings.md`) is the settings class written out: every setting described, in a
section, and the page as `scholarloom settings reference` writes it now."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from scholarloom.cli import app
from scholarloom.settings import Settings
from scholarloom.settings_doc import reference, rows
from tests.conftest import REPO

PAGE = REPO / "docs" / "settings.md"


def test_the_page_is_what_the_command_writes_now():
    written = CliRunner().invoke(app, ["settings", "reference"])
    assert written.exit_code == 0, written.output
    assert written.output == reference()
    assert PAGE.read_text() == reference(), (
        "docs/settings.md is stale: run `.venv/bin/scholarloom settings reference > docs/settings.md`"
    )


def test_every_setting_has_a_row_with_its_variable():
    page = PAGE.read_text()
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            for inner in group.model_fields:
                assert f"| `SCHOLARLOOM_{name.upper()}__{inner.upper()}` |" in page
        else:
            assert f"| `SCHOLARLOOM_{name.upper()}` |" in page
    assert "| `SCHOLARLOOM_PORT` | int (≥ 1, ≤ 65,535) | `8000` | Port the web server listens on. |" in page


def test_a_setting_without_a_description_is_refused():
    class Group(BaseModel):
        told: int = Field(1, description="Said.")
        untold: int = 2

    class Planted(BaseModel):
        fine: str = Field("x", description="Fine.")
        group: Group = Field(default_factory=Group, description="A group.")

    with pytest.raises(ValueError, match="SCHOLARLOOM_GROUP__UNTOLD has no description"):
        list(rows(Planted))
    assert list(rows(Planted, names=("fine",))) == ["| `SCHOLARLOOM_FINE` | str | `x` | Fine. |"]


def test_a_setting_in_no_section_is_refused(monkeypatch):
    from scholarloom import settings_doc

    monkeypatch.setattr(settings_doc, "SECTIONS", settings_doc.SECTIONS[:-1])  # "Harvested services" left out
    with pytest.raises(ValueError, match="sources"):
        reference()
