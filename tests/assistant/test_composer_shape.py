"""The shape that keeps one way to build an answer (issue 67): only `assistant.composer` constructs an `Answer` or
reads a reply's [n], and nothing reads a tool's `output` (what the model reads) but the plumbing that sends it to a
model or shows it as the tool's step."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

COMPOSER = "assistant/composer.py"
# Where a tool's `output` goes to a model (the agent, the pipeline, an MCP client) or is shown as the tool's step.
READS_OUTPUT = {"assistant/agent.py", "assistant/pipeline.py", "assistant/mcp_server.py", "chatui/turn_ui.py"}
# The layers an answer passes through (retrieval/ and web/ never see one: they may not import assistant/).
ROOMS = ("assistant", "chatui", "jobs", "scholarloom")
CITING = "as the table shows [2, p. 7]."


def _modules(rooms: tuple[str, ...] = ROOMS, root: Path = REPO) -> dict[str, ast.Module]:
    return {path.relative_to(root).as_posix(): ast.parse(path.read_text()) for room in rooms
            for path in sorted((root / room).rglob("*.py"))}  # fmt: skip


def answers_built(tree: ast.Module) -> int:
    """How many times a module calls `Answer(...)`."""
    return sum(isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "Answer"
                                                or getattr(node.func, "attr", None) == "Answer")
               for node in ast.walk(tree))  # fmt: skip


def citation_patterns(tree: ast.Module) -> list[str]:
    """The regular expressions a module compiles that read a citation ("[2, p. 7]": its number as a group)."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "compile" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):  # fmt: skip
            match = re.compile(node.args[0].value).search(CITING)
            if match is not None and "2" in match.groups():
                found.append(node.args[0].value)
    return found


def outputs_read(tree: ast.Module) -> int:
    """How many times a module reads an `.output` attribute (a method named so, or a value set, is not a read)."""
    calls = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return sum(isinstance(node, ast.Attribute) and node.attr == "output" and isinstance(node.ctx, ast.Load)
               and id(node) not in calls for node in ast.walk(tree))  # fmt: skip


def test_only_the_composer_builds_an_answer():
    built = {name: n for name, tree in _modules().items() if (n := answers_built(tree))}
    assert set(built) == {COMPOSER}, built


def test_only_the_composer_reads_citations():
    read = {name: p for name, tree in _modules().items() if (p := citation_patterns(tree))}
    assert set(read) == {COMPOSER}, read


def test_only_the_plumbing_reads_a_tools_output():
    read = {name: n for name, tree in _modules().items() if (n := outputs_read(tree))}
    assert set(read) <= READS_OUTPUT, {name: n for name, n in read.items() if name not in READS_OUTPUT}


def test_the_finders_find_what_breaks_the_shape():
    """The finders themselves, on planted code."""
    planted = ast.parse(
        "import re\nfrom assistant import turn\nCITED = re.compile(r'\\[(\\d{1,2})(?:, p\\. \\d+)?\\]')\n"
        "FIGURE = re.compile(r'^\\d+%$')\n"
        "def f(result, step, process):\n    step.output = process.output()\n"
        "    return turn.Answer(result.output), Answer('x')\n"
    )
    assert answers_built(planted) == 2
    assert citation_patterns(planted) == [r"\[(\d{1,2})(?:, p\. \d+)?\]"]
    assert outputs_read(planted) == 1
