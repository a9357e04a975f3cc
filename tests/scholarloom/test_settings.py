"""Settings: the documented environment variables, every field described, secrets enforced."""

import os

import pytest

from scholarloom.settings import AdmissionLimits, AgentSettings, Settings


def test_every_setting_is_documented():
    for model in (Settings, AgentSettings, AdmissionLimits):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"


def test_environment_names(monkeypatch, tmp_path):
    env = {
        "SCHOLARLOOM_DATA_DIR": str(tmp_path),
        "SCHOLARLOOM_DATABASE_URL": "postgresql+psycopg://u@db/scholarloom",
        "SCHOLARLOOM_QDRANT_URL": "http://qdrant:6333",
        "SCHOLARLOOM_LLM": "ollama_chat/qwen2.5",
        "SCHOLARLOOM_LLM_API_BASE": "http://127.0.0.1:11434",
        "SCHOLARLOOM_AUTH_SECRET": "s" * 40,
        "SCHOLARLOOM_HOST": "0.0.0.0",
        "SCHOLARLOOM_PORT": "9000",
        "SCHOLARLOOM_AGENT__MAX_TOOL_ROUNDS": "2",
        "SCHOLARLOOM_MCP__PER_USER": "3",
        "SCHOLARLOOM_MCP__WAIT_SECONDS": "7.5",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    s = Settings()
    assert s.data_dir == tmp_path and s.catalog_url == env["SCHOLARLOOM_DATABASE_URL"]
    assert (s.qdrant_url, s.llm, s.llm_api_base) == (
        "http://qdrant:6333",
        "ollama_chat/qwen2.5",
        "http://127.0.0.1:11434",
    )
    assert (s.host, s.port, s.agent.max_tool_rounds) == ("0.0.0.0", 9000, 2)
    assert (s.mcp.at_once, s.mcp.per_user, s.mcp.queue, s.mcp.wait_seconds) == (2, 3, 16, 7.5)
    assert s.require_secret() == "s" * 40


def test_defaults(tmp_path):
    s = Settings(data_dir=tmp_path)
    assert s.catalog_url == f"sqlite:///{tmp_path / 'scholarloom.db'}"
    assert s.qdrant_url is None and s.llm is None and (s.host, s.port) == ("127.0.0.1", 8000)


def test_the_encoder_threads_setting_reaches_the_onnx_session(monkeypatch, tmp_path):
    monkeypatch.setenv("SCHOLARLOOM_EMBED_THREADS", "1")
    settings = Settings(data_dir=tmp_path)
    dense, _sparse = settings.embedder()._load()
    assert dense._session.get_session_options().intra_op_num_threads == 1
    monkeypatch.setenv("SCHOLARLOOM_EMBED_THREADS", "0")
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        Settings(data_dir=tmp_path)


@pytest.mark.parametrize("secret", [None, "", "short", "demo-secret-change-me"])
def test_refuses_to_start_without_a_real_secret(tmp_path, secret):
    with pytest.raises(RuntimeError, match="SCHOLARLOOM_AUTH_SECRET"):
        Settings(data_dir=tmp_path, auth_secret=secret).require_secret()


def test_demo_mode_keeps_a_generated_secret(tmp_path):
    first = Settings(data_dir=tmp_path, demo=True).require_secret()
    assert len(first) >= 32 and Settings(data_dir=tmp_path, demo=True).require_secret() == first
    assert (tmp_path / "demo-auth-secret").stat().st_mode & 0o077 == 0


def test_the_demo_secret_is_private_from_its_creation(tmp_path, monkeypatch):
    """Created 0600 in one step, not written 0644 and narrowed afterwards (no window for another local user)."""
    import pathlib

    monkeypatch.setattr(pathlib.Path, "chmod", lambda *a, **k: pytest.fail("the file was made wider, then narrowed"))
    previous = os.umask(0)
    try:
        Settings(data_dir=tmp_path, demo=True).require_secret()
    finally:
        os.umask(previous)
    assert (tmp_path / "demo-auth-secret").stat().st_mode & 0o777 == 0o600


def test_a_backup_keeps_the_settings_without_a_secret(tmp_path):
    settings = Settings(
        data_dir=tmp_path, auth_secret="s" * 40, llm_api_key="sk-live-llm-key", qdrant_api_key="qdrant-key-123",
        metrics_token="metrics-token-456", database_url="postgresql://scholar:db-pass-789@db/scholarloom",
        llm_api_base="https://user:base-pass-000@llm.example/v1",
        sources={"openalex_api_key": "openalex-key-111", "s2_api_key": "s2-key-222", "contact_email": "a@b.org"},
    )  # fmt: skip
    kept = repr(settings.without_secrets())
    assert len(settings.secret_values()) == 7 and not [s for s in settings.secret_values() if s in kept]
    assert "base-pass-000" not in kept
    assert "postgresql://scholar:***@db/scholarloom" in kept and "a@b.org" in kept and str(tmp_path) in kept
