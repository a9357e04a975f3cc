"""The floors of the house: every product module (migrations excepted) at most `MAX_MODULE_LINES` lines, every
function or method at most `MAX_FUNCTION_LINES` (counted from its `def` line to its last line, decorators not
counted), and no public top-level function or class name defined in two product modules (names starting with `_`
are a module's own). A module is read in one sitting, a function fits a screen, and a name means one thing wherever
it is imported from.

Issue 67 brought the code under them room by room. A violation that has to wait is listed below (`STILL_OVER`,
`STILL_LONG`, `STILL_SHARED`), a ratchet that only shrinks: a violation not listed fails, and so does a listed one
that no longer violates (take it off its list)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO
from tests.test_layers import PACKAGES

MAX_MODULE_LINES = 320
MAX_FUNCTION_LINES = 60

# Violations that have to wait, as "module path", "module path::qualified name" or the name: none since issue 67.
STILL_OVER: set[str] = set()  # modules over `MAX_MODULE_LINES`
STILL_LONG: set[str] = set()  # functions and methods over `MAX_FUNCTION_LINES`
STILL_SHARED: set[str] = set()  # public names defined in more than one product module


def product_modules(root: Path = REPO, packages: list[str] | None = None) -> list[Path]:
    """Every module of the product's packages (those `tests/test_layers.py` knows, and `pages/` once it is there),
    migrations excepted: Alembic's revisions are history, written once and not changed."""
    if packages is None:
        packages = sorted(set(PACKAGES) | ({"pages"} if (root / "pages").is_dir() else set()))
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.relative_to(root).parts[:-1]:
                found.append(path)
    return found


def _name(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def long_modules(root: Path = REPO, packages: list[str] | None = None) -> dict[str, int]:
    """Module path -> its lines, for the modules over `MAX_MODULE_LINES`."""
    counts = {_name(path, root): len(path.read_text().splitlines()) for path in product_modules(root, packages)}
    return {name: lines for name, lines in counts.items() if lines > MAX_MODULE_LINES}


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a tree, nested and methods included, with its qualified name ("Class.method",
    "outer.inner")."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{child.name}", child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def long_functions(root: Path = REPO, packages: list[str] | None = None) -> dict[str, int]:
    """"module path::qualified name" -> its lines, for the functions over `MAX_FUNCTION_LINES` (from the `def` line
    to the last, decorators not counted)."""
    found = {}
    for path in product_modules(root, packages):
        for name, function in _functions(ast.parse(path.read_text())):
            lines = function.end_lineno - function.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found[f"{_name(path, root)}::{name}"] = lines
    return found


def shared_names(root: Path = REPO, packages: list[str] | None = None) -> dict[str, list[str]]:
    """Public top-level function or class name -> the modules that define it, for the names more than one does (an
    import of a name defined elsewhere is not a definition)."""
    defined: dict[str, list[str]] = {}
    for path in product_modules(root, packages):
        for node in ast.parse(path.read_text()).body:
            public = not getattr(node, "name", "_").startswith("_")
            if public and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.setdefault(node.name, []).append(_name(path, root))
    return {name: modules for name, modules in sorted(defined.items()) if len(modules) > 1}


def _ratchet(found: dict, listed: set[str], what: str) -> None:
    new = {name: found[name] for name in sorted(set(found) - listed)}
    done = sorted(listed - set(found))
    assert not new, f"{what}: {new}. Split by what it holds; the list below the floors only shrinks."
    assert not done, f"no longer {what}: {done}. Take them off the list in tests/test_floors.py."


def test_every_module_is_short():
    _ratchet(long_modules(), STILL_OVER, f"modules over {MAX_MODULE_LINES} lines")


def test_every_function_is_short():
    _ratchet(long_functions(), STILL_LONG, f"functions over {MAX_FUNCTION_LINES} lines")


def test_no_public_name_is_defined_twice():
    _ratchet(shared_names(), STILL_SHARED, "public names defined in two modules")


def test_the_floors_find_what_breaks_them(tmp_path):
    """The finders themselves, on a planted package: a long module, a long method, a long closure, a long
    decorated function (its decorators not counted), a name two modules define, and what they may share (a private
    name, an imported one, a migration)."""
    house = tmp_path / "house"
    (house / "migrations").mkdir(parents=True)

    def body(indent: int) -> str:  # a function's lines after its `def`, but one
        return "\n".join([" " * indent + "x = 1"] * (MAX_FUNCTION_LINES - 1))

    (house / "long.py").write_text("\n".join(["x = 1"] * (MAX_MODULE_LINES + 1)) + "\n")
    (house / "a.py").write_text(
        f"class Shelf:\n    def fill(self):\n{body(8)}\n        return x\n\n\n"  # one line over
        f"def outer():\n    def inner():\n{body(8)}\n        return x\n    return inner\n\n\n"
        f"@decorated\n@twice\ndef fits():\n{body(4)}\n\n\n"  # at the floor, counted from its `def`
        "def Reference():\n    pass\n\n\ndef _own():\n    pass\n"
    )
    (house / "b.py").write_text("from house.a import fits\n\n\nclass Reference:\n    pass\n\n\ndef _own():\n    pass\n")
    (house / "migrations" / "v1.py").write_text("\n".join(["x = 1"] * (MAX_MODULE_LINES + 1)) + "\n")
    packages = ["house"]
    assert long_modules(tmp_path, packages) == {"house/long.py": MAX_MODULE_LINES + 1}
    long = long_functions(tmp_path, packages)
    assert set(long) == {"house/a.py::Shelf.fill", "house/a.py::outer", "house/a.py::outer.inner"}
    assert long["house/a.py::Shelf.fill"] == MAX_FUNCTION_LINES + 1
    assert shared_names(tmp_path, packages) == {"Reference": ["house/a.py", "house/b.py"]}
