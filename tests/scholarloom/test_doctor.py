"""`scholarloom doctor`: the lines and exit codes on a healthy instance with a model, a wrong base URL, a data
directory that cannot be written, and an index held by a running server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.llm_server import text, tool_call
from ingest.indexing import index_papers
from ingest.pipeline import load_records
from ingest.report import Summary
from ingest.writer import Writer
from retrieval.scholarly.records import AuthorRecord, PaperRecord
from scholarloom.cli import app

runner = CliRunner()


@pytest.fixture
def instance(make_instance, tmp_path, monkeypatch):
    """A small loaded instance, closed (so the command can open its index), in demo mode."""
    data = tmp_path / "data"
    settings = make_instance(data)
    record = PaperRecord(id="2101.00003", arxiv_id="2101.00003", title="Doctor checks for self-hosters",
                         abstract="We check every part.", authors=[AuthorRecord(name="Ana Lima")],
                         categories=["cs.SE"], source="arxiv_api")  # fmt: skip
    load_records(settings.catalog(), "arxiv_api", [record], Summary())
    index_papers(Writer.of(settings.archive()), Summary())
    settings.close()
    for name, value in {"SCHOLARLOOM_DATA_DIR": str(data), "SCHOLARLOOM_DEMO": "1"}.items():
        monkeypatch.setenv(name, value)
    return data


def _lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.strip()]


def test_a_healthy_instance_with_a_model_that_calls_tools(instance, scripted, monkeypatch):
    monkeypatch.setenv("SCHOLARLOOM_LLM", "openai/scripted")
    monkeypatch.setenv("SCHOLARLOOM_LLM_API_BASE", scripted.api_base)
    monkeypatch.setenv("SCHOLARLOOM_LLM_API_KEY", "test-key")
    scripted.enqueue(text("ready"), text("1 2 3 4 5"), tool_call("echo", word="ping"))
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert any(line.startswith("warn settings") and "demo mode" in line for line in lines), lines
    assert any(line.startswith("ok   database") and "schema revision 0016; 1 papers" in line for line in lines), lines
    assert any(line.startswith("ok   index") and "1 papers and 0 full-text passages" in line for line in lines)
    assert any(line.startswith("ok   models") for line in lines)
    assert any(line.startswith("ok   llm") and "openai/scripted answers, streams, calls tools" in line for line in lines)
    assert "test-key" not in result.output
    scripted.enqueue(text("ready"), text("1 2"), text("I would rather not call tools."))
    as_json = runner.invoke(app, ["doctor", "--json"])
    checks = json.loads(as_json.output)
    assert as_json.exit_code == 0 and {c["area"] for c in checks} >= {"settings", "database", "index", "models", "llm"}
    (llm,) = [c for c in checks if c["area"] == "llm"]
    assert llm["status"] == "warn" and "did not call a tool" in llm["detail"]


def test_a_gpu_asked_for_where_there_is_none_is_a_warning_and_the_cpu(instance, monkeypatch):
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this machine's onnxruntime has the CUDA provider")
    monkeypatch.setenv("SCHOLARLOOM_EMBED_DEVICE", "cuda")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert any(line.startswith("ok   models") and "on the CPU" in line for line in lines), lines
    assert [line for line in lines if line.startswith("warn models") and "onnxruntime-gpu" in line], lines


def test_an_index_embedded_at_another_precision_is_named_with_the_fix(instance, monkeypatch):
    """The index was written at the default precision; the instance now runs the other one."""
    from scholarloom.settings import Settings

    other = "int8" if Settings.model_fields["embed_precision"].default == "float32" else "float32"
    assert not [line for line in _lines(runner.invoke(app, ["doctor"])) if "another encoder" in line]
    monkeypatch.setenv("SCHOLARLOOM_EMBED_PRECISION", other)
    lines = _lines(runner.invoke(app, ["doctor"]))
    (warning,) = [line for line in lines if "another encoder" in line]
    assert warning.startswith("warn index") and f"({other}; paper 2101.00003: cosine 0.9" in warning, warning
    assert "scholarloom index rebuild" in warning


def test_an_index_made_before_the_compact_index_is_named_and_converted(instance, monkeypatch):
    """An index keeping float32 vectors in memory (as every index did before) opens and answers; doctor names the
    layout and the command that converts it, and `scholarloom index convert` does so in place."""
    assert [line for line in _lines(runner.invoke(app, ["doctor"])) if "dense vectors int8 in memory" in line]
    converted = runner.invoke(app, ["index", "convert", "--to", "float32"])
    assert converted.exit_code == 0 and "(1 points) from int8 to float32" in converted.output, converted.output
    lines = _lines(runner.invoke(app, ["doctor"]))
    assert [line for line in lines if line.startswith("ok   index") and "dense vectors float32 in memory" in line]
    (warning,) = [line for line in lines if "SCHOLARLOOM_INDEX_VECTORS" in line]
    assert warning.startswith("warn index") and "scholarloom index convert" in warning, warning
    monkeypatch.setenv("SCHOLARLOOM_INDEX_VECTORS", "float32")  # or kept as it is, and the warning goes
    assert not [line for line in _lines(runner.invoke(app, ["doctor"])) if "SCHOLARLOOM_INDEX_VECTORS" in line]
    monkeypatch.delenv("SCHOLARLOOM_INDEX_VECTORS")
    again = runner.invoke(app, ["index", "convert"])
    assert again.exit_code == 0 and "from float32 to int8" in again.output, again.output
    assert "nothing to do" in runner.invoke(app, ["index", "convert"]).output
    assert runner.invoke(app, ["index", "convert", "--to", "int4"]).exit_code == 1


def test_a_wrong_llm_base_url_fails_with_what_to_do(instance, monkeypatch):
    monkeypatch.setenv("SCHOLARLOOM_LLM", "openai/qwen2.5")
    monkeypatch.setenv("SCHOLARLOOM_LLM_API_BASE", "http://127.0.0.1:9")
    monkeypatch.setenv("SCHOLARLOOM_LLM_API_KEY", "test-key")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    (llm,) = [line for line in _lines(result) if line.startswith("FAIL llm")]
    assert "the model's server at http://127.0.0.1:9 cannot be reached" in llm
    assert "base URL usually ends in /v1 (`http://127.0.0.1:9/v1`)" in llm


def test_a_data_directory_that_cannot_be_written(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a directory")
    monkeypatch.setenv("SCHOLARLOOM_DATA_DIR", str(tmp_path / "a-file" / "data"))
    monkeypatch.setenv("SCHOLARLOOM_DEMO", "1")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    (line,) = [line for line in _lines(result) if line.startswith("FAIL")]
    assert line.startswith("FAIL settings") and "cannot be written" in line
    assert not any(" database" in line for line in _lines(result))  # nothing else could be opened


def test_an_index_held_by_the_running_server_is_no_error(small_server, monkeypatch):
    monkeypatch.setenv("SCHOLARLOOM_DATA_DIR", str(small_server.data))
    monkeypatch.setenv("SCHOLARLOOM_DEMO", "1")
    monkeypatch.delenv("SCHOLARLOOM_LLM", raising=False)
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    lines = _lines(result)
    assert any(line.startswith("ok   index") and "held by the running server" in line for line in lines), lines
    assert any(line.startswith("ok   llm") and "retrieval-only mode" in line for line in lines)


def test_a_new_data_directory_is_private_and_doctor_says_when_one_is_not(tmp_path, monkeypatch):
    """A new data directory is 0700 and its database 0600 (they hold password hashes, chat history, feed keys and
    private uploads; under a umask of 022 they were 0755 and 0644); the commands run under a umask of 077; an older
    directory that others can read, and a proxy setting that trusts anyone, are named by doctor with the fix."""
    import os
    import stat

    data = tmp_path / "data"
    monkeypatch.setenv("SCHOLARLOOM_DATA_DIR", str(data))
    monkeypatch.setenv("SCHOLARLOOM_DEMO", "1")
    old = os.umask(0o022)
    try:
        result = runner.invoke(app, ["doctor"])
        assert os.umask(0o022) == 0o077  # the command set it
    finally:
        os.umask(old)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / "scholarloom.db").stat().st_mode) == 0o600
    assert not any("other users" in line for line in _lines(result)), result.output
    data.chmod(0o755)
    (data / "scholarloom.db").chmod(0o644)
    monkeypatch.setenv("SCHOLARLOOM_FORWARDED_ALLOW_IPS", "*")
    lines = _lines(runner.invoke(app, ["doctor"]))
    assert any(line.startswith("warn settings") and f"chmod 700 {data}" in line for line in lines), lines
    assert any(line.startswith("warn settings") and "chmod 600" in line for line in lines), lines
    assert any(line.startswith("warn settings") and "FORWARDED_ALLOW_IPS is '*'" in line for line in lines), lines


def test_an_index_made_before_the_bm25_scan_threshold_is_named_with_the_rebuild(instance, monkeypatch):
    """An index whose segments keep a lower BM25 full-scan threshold than this version makes (as every index made
    before it keeps Qdrant's default) answers as before; doctor says what it lacks and the command that remakes it."""
    import retrieval.vectors.edge_shard as edge_shard

    assert not [line for line in _lines(runner.invoke(app, ["doctor"])) if "earlier version" in line]
    monkeypatch.setattr(edge_shard, "BM25_SCAN_UP_TO", edge_shard.BM25_SCAN_UP_TO * 2)  # this index's is now lower
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    (warning,) = [line for line in _lines(result) if "earlier version" in line]
    assert warning.startswith("warn index") and "BM25 side" in warning and "scholarloom index rebuild" in warning
