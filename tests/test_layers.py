"""The arrows point one way: each top-level package imports only the ones the house plan allows."""

import ast

import pytest

from tests.conftest import REPO

ALLOWED = {
    "retrieval": set(),
    "ingest": {"retrieval"},
    "pages": {"retrieval"},
    "auth": {"retrieval"},
    "assistant": {"pages", "retrieval"},
    "scholarloom": {"assistant", "auth", "pages", "retrieval", "ingest"},
}


def imported_packages(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (REPO / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in ALLOWED and top != package:
                    found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_follow_the_arrows(package):
    wrong = {top: files for top, files in imported_packages(package).items() if top not in ALLOWED[package]}
    assert not wrong, f"{package} imports {wrong}"
