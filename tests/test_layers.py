"""The arrows point one way: each top-level folder imports only the ones the house plan allows, nothing but entry
points imports `scholarloom`, and every module imports on its own (no cycle hides behind an import order)."""

import ast
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

ALLOWED = {
    "common": set(),
    "retrieval": {"common"},
    "ingest": {"common", "retrieval"},
    "pages": {"retrieval"},
    "auth": {"retrieval"},
    "assistant": {"common", "pages", "retrieval"},
    "chatui": {"assistant", "auth", "pages", "retrieval"},
    "scholarloom": {"assistant", "auth", "chatui", "common", "ingest", "pages", "retrieval"},
    # Benchmarks measure the product from outside; an entry point may build the settings (`scholarloom.settings`).
    "bench": {"assistant", "auth", "bench", "ingest", "pages", "retrieval", "scholarloom", "tests"},
}
PACKAGES = [name for name in ALLOWED if name != "bench"]


def test_every_top_level_folder_is_covered():
    folders = {p.name for p in REPO.iterdir() if p.is_dir() and any(p.rglob("*.py"))} - {"tests", ".venv", "data"}
    assert folders == set(ALLOWED), "a new top-level folder needs its arrows in ALLOWED"


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
            if parts == ("retrieval", "migrations", "env"):  # Alembic's environment runs only inside Alembic
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


# Forked once per module from a parent that loaded only third-party libraries: each of our modules is imported
# into a process holding none of ours, in ~10 ms rather than a fresh interpreter's seconds.
IMPORT_ALONE = """
import gc, importlib, os, sys
import chainlit, fastapi, httpx, numpy, pydantic, sqlalchemy, sqlmodel, typer  # shared by every fork
import fastembed, onnx, onnxruntime, pypdf, qdrant_client, qdrant_edge, uvicorn  # noqa: E401
gc.freeze()  # the collector leaves the libraries' objects alone: a fork's collections never walk (and copy) them
failed = []
for name in sys.argv[1:]:
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
    problem = os.read(read, 4000).decode()
    os.close(read)
    os.waitpid(pid, 0)
    if problem:
        failed.append(problem)
print("\\n".join(failed))
"""


def test_every_module_imports_alone(tmp_path):
    """Each module on its own, so a cycle or a missing import cannot hide behind another module's (Chainlit
    pointed at a scratch folder: it writes a default config where it is first imported)."""
    env = {**os.environ, "CHAINLIT_APP_ROOT": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    modules = _modules()
    halves = [modules[0::2], modules[1::2]]  # two interpreters side by side: one per core
    runs = [
        subprocess.Popen([sys.executable, "-c", IMPORT_ALONE, *half], cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)  # fmt: skip
        for half in halves
    ]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-3000:]
        assert out.strip() == "", out
