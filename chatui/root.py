"""Chainlit's root folder (its config, welcome page and public files), kept in our data directory."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATE = PACKAGE_DIR.parent / "scholarloom" / "chainlit"
WELCOME = PACKAGE_DIR.parent / "chainlit.md"


def prepare_chainlit_root(root: Path, origins: list[str], session_seconds: int) -> Path:
    """Write Chainlit's config (our template, with the allowed origins and the session lifetime filled in), the
    welcome page and our public files (logos, the card element) under `root`."""
    (root / ".chainlit").mkdir(parents=True, exist_ok=True)
    config = (TEMPLATE / "config.toml").read_text()
    config = config.replace(
        'allow_origins = ["http://127.0.0.1:8000", "http://localhost:8000"]', f"allow_origins = {json.dumps(origins)}"
    ).replace(
        "user_session_timeout = 604800  # 7 days",
        f"user_session_timeout = {session_seconds}  # SCHOLARLOOM_SESSION_HOURS",
    )
    (root / ".chainlit" / "config.toml").write_text(config)
    if WELCOME.exists():
        shutil.copyfile(WELCOME, root / "chainlit.md")
        shutil.copyfile(WELCOME, root / "chainlit_en-US.md")  # what English browsers ask for first
    shutil.copytree(TEMPLATE / "public", root / "public", dirs_exist_ok=True)
    _write_translation(root / ".chainlit" / "translations")
    return root


# What the chat says in English where Chainlit's words would leave a reader guessing: a sign-in refused because the
# server is busy (`chatui.busy`: 503, which the form looks up by its status text), and a socket that cannot connect.
SAID = {
    ("auth", "login", "errors", "service unavailable"): "The server is busy signing others in. Please try again in "
    "a few seconds.",
    ("common", "status", "error", "serverConnection"): "Could not reach the server: it may be busy or restarting. "
    "Reload the page in a few seconds.",
}


def _write_translation(folder: Path) -> None:
    """Chainlit's English words with ours (`SAID`) in place; Chainlit copies its other languages beside it."""
    from importlib.util import find_spec

    spec = find_spec("chainlit")
    translation = json.loads((Path(spec.origin).parent / "translations" / "en-US.json").read_text(encoding="utf-8"))
    for path, words in SAID.items():
        branch = translation
        for key in path[:-1]:
            branch = branch.setdefault(key, {})
        branch[path[-1]] = words
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "en-US.json").write_text(json.dumps(translation, indent=4, ensure_ascii=False), encoding="utf-8")


def point_chainlit_at(root: Path) -> None:
    """Chainlit takes its root from CHAINLIT_APP_ROOT when it is first imported (and otherwise writes a default
    config into the working directory): the one environment variable the app sets, before that import. Once
    Chainlit is imported its root is fixed, so a second chat app in one process must share it."""
    loaded = sys.modules.get("chainlit.config")
    if loaded is not None and Path(loaded.APP_ROOT) != root:
        raise RuntimeError(f"Chainlit was already loaded from {loaded.APP_ROOT}; one chat app per process")
    os.environ["CHAINLIT_APP_ROOT"] = str(root)
