"""The web layer's shape: routes are module-level functions on a router, and none checks the viewer by hand; who
reads, whether they are signed in, an admin, or posting from our own pages comes from the dependencies of
`web.dependencies` (`Viewer`, `page_user`, `form_user`, `admin_user`, `FromThisSite`), each guard written once."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

METHODS = {"get", "post", "put", "patch", "delete", "api_route"}
BY_HAND = {"viewer", "is_admin", "same_origin"}  # `deps.viewer(`, `deps.is_admin(`, `same_origin(`
ROUTE_MODULES = sorted((REPO / "web").glob("*.py")) + [REPO / "scholarloom" / "app.py"]


def _is_route(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in METHODS
               for d in function.decorator_list)  # fmt: skip


def _routes(path: Path, tree: ast.Module | None = None):
    for node in ast.walk(tree or ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_route(node):
            yield node


def _checks_by_hand(function) -> list[str]:
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in BY_HAND:
                found.append(f"{name}( at line {node.lineno}")
    return found


def test_no_route_checks_the_viewer_by_hand():
    wrong = {f"{path.relative_to(REPO)}::{route.name}": calls for path in ROUTE_MODULES for route in _routes(path)
             if (calls := _checks_by_hand(route))}  # fmt: skip
    assert not wrong, f"routes that check the viewer, an admin or a form's origin themselves: {wrong}"


def test_the_web_layers_routes_sit_at_module_level():
    """A route inside a function (`xxx_routes(router, deps)`) hides what it needs in a closure; at module level its
    signature says it (`Deps`, `Viewer`, a guard)."""
    nested = []
    for path in sorted((REPO / "web").glob("*.py")):
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        nested += [f"{path.relative_to(REPO)}::{route.name}" for route in _routes(path, tree) if id(route) not in top]
    assert not nested, f"routes defined inside a function: {nested}"


def test_the_shape_test_sees_a_guard_written_by_hand(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('@router.post("/x")\ndef x(request, deps):\n    user = deps.viewer(request)\n'
                       '    if not same_origin(request):\n        return None\n    return user\n')  # fmt: skip
    (route,) = list(_routes(planted))
    assert _checks_by_hand(route) == ["viewer( at line 3", "same_origin( at line 4"]


def test_every_modules_router_is_included():
    """A module's routes answer only once `make_router` (or `make_api`, for the JSON API) includes its router."""
    with_router = {path.stem for path in (REPO / "web").glob("*.py")
                   if any(isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "router" for t in node.targets)
                          for node in ast.parse(path.read_text()).body)}  # fmt: skip
    included = set()
    for node in ast.walk(ast.parse((REPO / "web" / "routes.py").read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "router" and isinstance(node.value, ast.Name):
            included.add(node.value.id)
    # (routes.py includes its own `router` by that name; the JSON API's is included by `make_api`)
    assert with_router - included == {"routes", "api"}
