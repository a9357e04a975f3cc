"""BENCHMARKS.md is today's figures, each with a command that exists: every row of every table names a `bench/`
script, a `scholarloom` command, a `make` target or `.ci/run`, and the commit and date it was measured; every script
in `bench/` has a row (and a line in `bench/README.md`); the file stays short. No network, nothing run."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

LIMIT = 600  # lines
# Modules of bench/ that are not commands of their own, only code other scripts import. bench/README.md must say so
# of each. There is none today: scripts share code by importing another command (bench.load, bench.precision, ...).
HELPERS: set[str] = set()

BENCH = re.compile(r"(?<![\w/.-])bench[./](\w+)")
CLI = re.compile(r"(?<![\w/.-])(?:\S*/)?scholarloom(?:\.cli)?((?:\s+[a-z][a-z-]*){1,2})")
MAKE = re.compile(r"(?<![\w-])make\s+([a-z][\w-]*)")
FILE = re.compile(r"(?<![\w/])(\.ci/run)\b")
COMMIT = re.compile(r"\b[0-9a-f]{7,40}\b")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
SAME = "the same command"


def tables(text: str) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    """Each markdown table: the line of its header, the header's cells, and its rows (line number, cells)."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|[\s:|-]+\|", lines[i + 1].strip()):
            start, header, rows = i + 1, cells(lines[i]), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append((i + 1, cells(lines[i])))
                i += 1
            found.append((start, header, rows))
        else:
            i += 1
    return found


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def cli_commands() -> set[tuple[str, ...]]:
    """Every command path the `scholarloom` Typer app registers: ("serve",), ("bench", "retrieval"), ..."""
    from scholarloom.cli import app

    def walk(typer_app, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        paths = set()
        for command in typer_app.registered_commands:
            paths.add(prefix + (command.name or command.callback.__name__.replace("_", "-"),))
        for group in typer_app.registered_groups:
            name = group.name or group.typer_instance.info.name
            paths.add(prefix + (name,))
            paths |= walk(group.typer_instance, prefix + (name,))
        return paths

    return walk(app, ())


def make_targets(root: Path) -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*)\s*:", (root / "Makefile").read_text(), re.M))


def scripts(root: Path) -> set[str]:
    return {path.stem for path in (root / "bench").glob("*.py") if path.stem != "__init__"}


def named(command: str, root: Path, cli: set[tuple[str, ...]], targets: set[str]) -> tuple[set[str], list[str]]:
    """The bench scripts a command cell names, and what it names that does not exist (or that it names nothing)."""
    benches, missing, anything = set(), [], False
    for name in BENCH.findall(command):
        anything = True
        benches.add(name)
        if not (root / "bench" / f"{name}.py").is_file():
            missing.append(f"bench.{name}")
    for words in CLI.findall(command):
        anything = True
        path = tuple(words.split())
        if path[:2] not in cli and path[:1] not in cli:
            missing.append("scholarloom " + " ".join(path))
        elif path[:1] in cli and path[:2] not in cli and any(p[:1] == path[:1] and len(p) > 1 for p in cli):
            missing.append("scholarloom " + " ".join(path))  # a group named with a subcommand it does not have
    for target in MAKE.findall(command):
        anything = True
        if target not in targets:
            missing.append(f"make {target}")
    for file in FILE.findall(command):
        anything = True
        if not (root / file).is_file():
            missing.append(file)
    if not anything:
        missing.append(f"no command in {command!r}")
    return benches, missing


def problems(root: Path = REPO) -> list[str]:
    text = (root / "BENCHMARKS.md").read_text()
    found, cli, targets, covered = [], cli_commands(), make_targets(root), set()
    if len(text.splitlines()) > LIMIT:
        found.append(f"BENCHMARKS.md has {len(text.splitlines())} lines, more than {LIMIT}")
    every = tables(text)
    if not every:
        found.append("BENCHMARKS.md has no table")
    for start, header, rows in every:
        where = {name.split()[0].lower().strip("*,"): i for i, name in enumerate(header) if name}
        if "command" not in where or "commit" not in where:
            found.append(f"line {start}: a table without a Command and a Commit column: {header}")
            continue
        previous = None
        for line, row in rows:
            if len(row) != len(header):
                found.append(f"line {line}: {len(row)} cells under {len(header)} headings")
                continue
            command, commit = row[where["command"]], row[where["commit"]]
            if command.lower().startswith(SAME):
                if previous is None:
                    found.append(f"line {line}: 'the same command' with no row above")
                    continue
                command = previous
            benches, missing = named(command, root, cli, targets)
            covered |= benches
            found += [f"line {line}: names {what}, which does not exist" for what in missing]
            if not COMMIT.search(commit) or not DATE.search(commit):
                found.append(f"line {line}: no commit and date in {commit!r}")
            previous = command
    for script in sorted(scripts(root) - HELPERS - covered):
        found.append(f"bench/{script}.py has no row in BENCHMARKS.md")
    readme = (root / "bench" / "README.md").read_text()
    for script in sorted(scripts(root)):
        if f"bench.{script}`" not in readme and f"`{script}`" not in readme:
            found.append(f"bench/{script}.py is not listed in bench/README.md")
    for helper in sorted(HELPERS):
        if helper not in readme:
            found.append(f"bench/{helper}.py is a helper bench/README.md does not document")
    return found


def test_every_row_names_a_command_that_exists_and_every_script_has_a_row():
    assert problems() == []


def test_the_check_fails_on_a_bogus_row_an_unmeasured_script_and_a_long_file(tmp_path):
    """The check itself can fail: a copy of the repository's documents with a made-up command, a CLI command that
    does not exist, a row without its date, a script without a row, and the file past its limit."""
    (tmp_path / "bench").mkdir()
    for script in scripts(REPO):
        (tmp_path / "bench" / f"{script}.py").write_text("")
    (tmp_path / "bench" / "README.md").write_text((REPO / "bench" / "README.md").read_text())
    (tmp_path / "Makefile").write_text((REPO / "Makefile").read_text())
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text("")
    text = (REPO / "BENCHMARKS.md").read_text()
    (tmp_path / "BENCHMARKS.md").write_text(text)
    assert problems(tmp_path) == []

    bogus = (
        "| a made-up figure | 1.0 | `python -m bench.no_such_script` | abc1234, 2026-12-07 |\n"
        "| another | 2.0 | `scholarloom bench no-such-command` | abc1234, 2026-12-07 |\n"
        "| one more | 3.0 | `make no-such-target` | abc1234, 2026-12-07 |\n"
        "| undated | 4.0 | `python -m bench.retrieval` | abc1234 |\n"
        "| nothing to run | 5.0 | by hand | abc1234, 2026-12-07 |\n"
    )
    first_table_end = text.index("\n\n", text.index("| --- |"))
    (tmp_path / "BENCHMARKS.md").write_text(text[:first_table_end + 1] + bogus + text[first_table_end + 1:])
    (tmp_path / "bench" / "new_experiment.py").write_text("")
    found = "\n".join(problems(tmp_path))
    for expected in ("bench.no_such_script", "scholarloom bench no-such-command", "make no-such-target",
                     "no commit and date in 'abc1234'", "no command in 'by hand'",
                     "bench/new_experiment.py has no row", "bench/new_experiment.py is not listed"):
        assert expected in found

    (tmp_path / "BENCHMARKS.md").write_text(text + "\nmore\n" * LIMIT)
    assert any("more than 600" in problem for problem in problems(tmp_path))
