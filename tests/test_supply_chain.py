"""The locked dependency set: no compromised litellm, no unexpected start-up hooks in site-packages."""

import re
import site
from pathlib import Path

from tests.conftest import REPO

COMPROMISED = {("litellm", "1.82.7"), ("litellm", "1.82.8")}
EXPECTED_PTH = re.compile(r"^(distutils-precedence|__editable__\.scholarloom-[\d.]+|_virtualenv)\.pth$")


def locked(path: Path) -> set[tuple[str, str]]:
    return set(re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", path.read_text(), re.M))


def test_locks_pin_litellm_outside_the_compromised_releases():
    for name in ("requirements.lock", "requirements-dev.lock"):
        pins = locked(REPO / name)
        assert not pins & COMPROMISED
        assert ("litellm", "1.110.2") in pins


def test_every_locked_requirement_carries_hashes():
    text = (REPO / "requirements.lock").read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9_.\-]+==)", text.split("\n", 2)[2])
    assert all("--hash=sha256:" in block for block in blocks if "==" in block)


def test_no_unexpected_pth_files():
    found = {p.name for d in site.getsitepackages() for p in Path(d).glob("*.pth")}
    assert all(EXPECTED_PTH.match(name) for name in found), found


def test_uv_itself_is_installed_by_hash():
    """The installer that checks every other hash is checked too: the Makefile installs it only from
    requirements-uv.lock with --require-hashes, and that is the uv this environment runs."""
    import subprocess
    import sys

    makefile = (REPO / "Makefile").read_text()
    installs = [line for line in makefile.splitlines() if "pip install" in line and "uv" in line]
    assert installs and all("--require-hashes" in line and "requirements-uv.lock" in line for line in installs)
    lock = (REPO / "requirements-uv.lock").read_text()
    ((name, pinned),) = locked(REPO / "requirements-uv.lock")
    assert name == "uv" and lock.count("--hash=sha256:") >= 2
    uv = Path(sys.executable).with_name("uv")
    assert subprocess.run([str(uv), "--version"], capture_output=True, text=True).stdout.split()[1] == pinned
