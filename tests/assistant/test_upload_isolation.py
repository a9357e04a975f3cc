"""Every agent tool, asked as another user or as nobody, about a user's upload (by its id, its words, its title and
its authors): none of them shows it. The owner's full-text search does, so the probe can fail."""

from __future__ import annotations

import inspect
import re
import typing

from assistant.tools import TOOLS, ToolDeps, call_tool
from ingest.pdf_worker import PdfLimits
from ingest.report import Summary
from ingest.writer import Writer
from jobs.kinds import index_upload
from tests.ingest.test_uploads import PHRASE, _stored

LEAKS = re.compile(r"upload:\d|/me/library/\d|longeval\.pdf|Kalpesh|Bransom|Dasigi", re.I)


def _arguments(tool, upload_id: str) -> list[dict]:
    """Each way of pointing a tool at the upload: its id, its body's words, its title, its authors."""
    hints = typing.get_type_hints(tool)
    probes: list[dict] = [{}]
    for name in list(inspect.signature(tool).parameters)[1:]:
        kind = hints[name]
        if name in ("paper_id", "paper_ids"):
            value = [upload_id] if "list" in str(kind) else upload_id
            probes = [{**p, name: value} for p in probes]
        elif name in ("query", "name", "institution", "sentence"):
            words = [PHRASE, "LongEval Guidelines for Human Evaluation", "Kalpesh Krishna", upload_id]
            probes = [{**p, name: w} for p in probes for w in words]
        elif name == "researcher_id":
            probes = [{**p, name: 1} for p in probes]
    return probes


def test_no_tool_shows_another_users_upload(make_instance, tmp_path):
    settings = make_instance(tmp_path / "data")
    upload = _stored(settings, tmp_path)
    index_upload(Writer.of(settings.archive()), settings.uploads(), upload.id, PdfLimits(),
                 Summary())  # fmt: skip
    paper_id = f"upload:{upload.id}"
    archive = settings.archive()
    owner = call_tool(TOOLS[[t.__name__ for t in TOOLS].index("search_fulltext")], ToolDeps(archive, user="carol"),
                      {"query": PHRASE, "paper_id": paper_id})  # fmt: skip
    assert LEAKS.search(owner.output) and "p. " in owner.output  # the probe finds it for its owner
    opened = call_tool(TOOLS[[t.__name__ for t in TOOLS].index("get_paper")], ToolDeps(archive, user="carol"),
                       {"paper_id": paper_id})  # fmt: skip
    assert not opened.failed and "# LongEval: Guidelines for Human Evaluation" in opened.output
    assert [(c.kind, c.id, c.path) for c in opened.cards] == [("upload", paper_id, f"/me/library/{upload.id}")]
    asked = 0
    for viewer in ("dave", None):
        for tool in TOOLS:
            for arguments in _arguments(tool, paper_id):
                result = call_tool(tool, ToolDeps(archive, user=viewer), arguments)
                shown = result.output + " ".join(f"{c.id} {c.title} {c.path}" for c in result.cards)
                for value in arguments.values():  # what the asker said may come back ("no paper with id ..."):
                    for echoed in value if isinstance(value, list) else [value]:  # only what they did not say counts
                        shown = shown.replace(str(echoed), "")
                assert not LEAKS.search(shown), (viewer, tool.__name__, arguments, shown[:500])
                asked += 1
    assert asked > 2 * len(TOOLS)
