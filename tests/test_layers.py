"""The arrows point one way: each top-level folder imports only the ones the house plan allows, each room of
`retrieval/` only the rooms below it, nothing but entry points imports `scholarloom`, no cycle hides anywhere (not
even behind an import inside a function), and every module imports on its own."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

ALLOWED = {
    "common": set(),
    "retrieval": {"common"},
    "ingest": {"common", "retrieval"},
    "jobs": {"common", "ingest", "retrieval"},  # the queue, the runner, the kinds and their context
    # The page objects (read models built once, rendered per format), beneath both the web and the assistant.
    "pages": {"retrieval"},
    "web": {"jobs", "pages", "retrieval"},  # the web layer: routes, renderers, guards, the JSON API, admin
    "auth": {"retrieval"},
    "assistant": {"common", "pages", "retrieval"},  # never `web`: the tools read pages, not routes
    "chatui": {"assistant", "auth", "common", "jobs", "pages", "retrieval"},  # (common: the admission of turns)
    "scholarloom": {"assistant", "auth", "chatui", "common", "ingest", "jobs", "pages", "retrieval", "web"},
    # The stand-ins tests and benchmarks both run the product against (a scripted model, a served instance).
    "harness": {"assistant", "harness"},  # the scripted model answers the probe in `assistant.probe`'s words
    # Benchmarks measure the product from outside; an entry point may build the settings (`scholarloom.settings`).
    "bench": {"assistant", "auth", "bench", "common", "harness", "ingest", "jobs", "pages", "retrieval", "scholarloom",
              "web"},
}
PACKAGES = [name for name in ALLOWED if name not in ("bench", "harness")]
# The rooms of `retrieval/`, each allowed the rooms below it (and `common`): the vectors know nothing of papers, the
# catalog nothing of search or of users' own files, and only the facade (`retrieval/archive.py`) holds them all.
ROOMS = {
    "retrieval.vectors": set(),
    "retrieval.upkeep": {"retrieval.vectors"},
    "retrieval.scholarly": {"retrieval.upkeep"},
    "retrieval.library": {"retrieval.scholarly", "retrieval.upkeep", "retrieval.vectors"},
    "retrieval.search": {"retrieval.library", "retrieval.scholarly", "retrieval.vectors"},
    "retrieval.archive": {"retrieval.library", "retrieval.scholarly", "retrieval.search", "retrieval.vectors"},
}


def test_every_top_level_folder_is_covered():
    folders = {p.name for p in REPO.iterdir() if p.is_dir() and any(p.rglob("*.py"))} - {"tests", ".venv", "data"}
    assert folders == set(ALLOWED), "a new top-level folder needs its arrows in ALLOWED"


def test_every_room_of_retrieval_is_covered():
    found = {f"retrieval.{p.stem}" for p in (REPO / "retrieval").iterdir() if p.name != "__init__.py"
             and (p.suffix == ".py" or (p / "__init__.py").is_file())}  # fmt: skip
    assert found == set(ROOMS), "a new room of retrieval/ needs its arrows in ROOMS"


def _imports(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def imported_packages(folder: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (REPO / folder).rglob("*.py"):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in {*ALLOWED, "tests"} and top != folder:
                found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_imports_follow_the_arrows(folder):
    wrong = {top: files for top, files in imported_packages(folder).items() if top not in ALLOWED[folder]}
    assert not wrong, f"{folder} imports {wrong}"


def _room(name: str) -> str | None:
    return next((room for room in ROOMS if name == room or name.startswith(room + ".")), None)


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_rooms_of_retrieval_follow_their_arrows(room):
    where = REPO / Path(*room.split("."))
    paths = [where.with_suffix(".py")] if where.with_suffix(".py").is_file() else sorted(where.rglob("*.py"))
    wrong = {}
    for path in paths:
        for name in _imports(path):
            other = _room(name)
            if name == "retrieval" or (name.startswith("retrieval.") and other is None):
                wrong.setdefault(name, []).append(str(path.relative_to(REPO)))  # outside every room
            elif other is not None and other != room and other not in ROOMS[room]:
                wrong.setdefault(name, []).append(str(path.relative_to(REPO)))
    assert not wrong, f"{room} imports {wrong}"


def import_graph(root: Path, packages: list[str]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, wherever the import statement stands (at the top, inside a function
    or a method), except under `if TYPE_CHECKING:`, which never runs. `from package import name` counts the module
    `package.name` when it is one."""
    files = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def ours(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree, never = ast.parse(path.read_text()), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                never |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
        found = set()
        for node in ast.walk(tree):
            if id(node) in never:
                continue
            if isinstance(node, ast.Import):
                found |= {ours(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(ours(node.module))
                found |= {ours(f"{node.module}.{alias.name}") for alias in node.names} - {ours(node.module)}
        graph[module] = found - {None, module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    order, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in order:
            continue
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_cycle_hides_behind_an_import_inside_a_function():
    assert cycles(import_graph(REPO, PACKAGES)) == []


def test_a_planted_cycle_is_found(tmp_path):
    """The finder itself: two modules that import each other only inside functions, and a third that imports one of
    them under TYPE_CHECKING (no cycle: that import never runs)."""
    (tmp_path / "house").mkdir()
    (tmp_path / "house" / "__init__.py").write_text("")
    (tmp_path / "house" / "a.py").write_text("def f():\n    from house.b import g\n    return g\n")
    (tmp_path / "house" / "b.py").write_text("def g():\n    from house import a\n    return a\n")
    unread = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import house.d\n"
    (tmp_path / "house" / "c.py").write_text(unread)
    (tmp_path / "house" / "d.py").write_text("import house.c\n")
    assert cycles(import_graph(tmp_path, ["house"])) == [["house.a", "house.b"]]


def test_only_entry_points_import_scholarloom():
    """`scholarloom` is the composition root: the product's packages never reach into it, and the bench scripts that
    do are programs of their own (they build the settings), not libraries others import."""
    for folder in ALLOWED:
        for path in (REPO / folder).rglob("*.py"):
            if any(name.split(".")[0] == "scholarloom" for name in _imports(path)) and folder != "scholarloom":
                assert folder == "bench" and '__name__ == "__main__"' in path.read_text(), path


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__main__":  # runs its program when imported
                continue
            if parts == ("retrieval", "upkeep", "migrations", "env"):  # Alembic's environment runs only inside Alembic
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


# Forked once per module from a parent that loaded only third-party libraries: each of our modules is imported
# into a process holding none of ours, in ~10 ms rather than a fresh interpreter's seconds. One parent keeps two
# children running (one per core), the next module forked as soon as either ends: the libraries are loaded once,
# and neither core waits on a half that happened to get the slower modules.
IMPORT_ALONE = """
import gc, importlib, os, sys
import chainlit, fastapi, httpx, numpy, pydantic, sqlalchemy, sqlmodel, typer  # shared by every fork
import fastembed, onnx, onnxruntime, pypdf, qdrant_client, qdrant_edge, uvicorn  # noqa: E401
import alembic, pydantic.v1  # the migrations' `op`; FastAPI's check of each route's parameters (in every web module)
if sys.dont_write_bytecode:  # else each fork compiles again every module of ours it imports: cached in a scratch folder
    sys.pycache_prefix, sys.dont_write_bytecode = sys.argv[1], False
gc.freeze()  # the collector leaves the libraries' objects alone: a fork's collections never walk (and copy) them
failed, waiting, running = [], sys.argv[2:], {}
while waiting or running:
    while waiting and len(running) < 2:
        name = waiting.pop(0)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                importlib.import_module(name)
                problem = ""
            except BaseException as exc:
                problem = f"{name}: {type(exc).__name__}: {exc}"
            os.write(write, problem.encode()[:4000])
            os._exit(0)
        os.close(write)
        running[pid] = name, read
    pid, status = os.wait()
    name, read = running.pop(pid)
    problem = os.read(read, 4000).decode()  # written whole before the child ended
    os.close(read)
    if problem or status:
        failed.append(problem or f"{name}: the import ended its process (wait status {status})")
print("\\n".join(failed))
"""


def test_every_module_imports_alone(tmp_path):
    """Each module on its own, so a cycle or a missing import cannot hide behind another module's (Chainlit
    pointed at a scratch folder: it writes a default config where it is first imported)."""
    env = {**os.environ, "CHAINLIT_APP_ROOT": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run([sys.executable, "-c", IMPORT_ALONE, str(tmp_path / "pycache"), *_modules()], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "", run.stdout
