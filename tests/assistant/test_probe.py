"""The server's probe of its model: at start, again after failures with back-off, one line for admins."""

from __future__ import annotations

from assistant.llm import LLMConfig
from assistant.probe import ProbeWatch
from harness.llm_server import failure, text, tool_call


def test_a_failing_model_is_asked_again_with_back_off_until_it_answers(scripted):
    config = LLMConfig(model="openai/scripted", api_base=scripted.api_base, api_key="test-key", timeout=10)
    scripted.enqueue(failure(401), failure(503), text("ready"), text("1 2 3"), tool_call("echo", word="ping"))
    seen, said = [], []
    watch = ProbeWatch(config, first_wait=30, sleep=lambda seconds: seen.append(watch.summary()), on_probe=said.append)
    watch.start().join(timeout=60)
    assert watch.waits == [30, 60]  # doubling; nobody slept for real
    assert said == [*seen, watch.summary()]  # each probe's line, for the server to keep where admins read
    assert "refused the API key (401)" in seen[0] and "asked again with back-off" in seen[0]
    assert "failed (503)" in seen[1]
    found = watch.latest
    assert found.error is None and found.answers and found.streams and found.calls_tools and found.mode == "agent"
    assert watch.summary().startswith("openai/scripted: answers, streams, calls tools (asked ")
    assert "test-key" not in " ".join(seen) + watch.summary()


def test_a_model_that_does_not_call_tools_is_said_so(scripted):
    config = LLMConfig(model="openai/scripted", api_base=scripted.api_base, api_key="test-key", timeout=10)
    scripted.enqueue(text("ready"), text("1 2 3"), text("No."))
    watch = ProbeWatch(config, sleep=lambda seconds: None)
    watch.start().join(timeout=60)
    assert watch.latest.mode == "pipeline" and watch.waits == []  # it answers: search first, then it writes
    assert "did not call a tool when asked" in watch.summary()
