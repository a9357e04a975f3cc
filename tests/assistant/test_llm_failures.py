"""What a user sees when the model cannot answer (a specific message, no trace, no key, and search's results for
the question, labelled) and when a reasoning model thinks aloud (never shown as the answer)."""

from __future__ import annotations

import pytest

from assistant.agent import Agent
from assistant.failures import config_hints, missing_key
from assistant.llm import LLMConfig, ThinkingFilter, llm_retrier, strip_thinking
from assistant.tools import ToolDeps
from harness.llm_server import failure, text, tool_call
from tests.assistant.test_agent import Pauses, RecordingUI, agent_for

QUESTION = "replay log statements from checkpoints after training"


async def _fails_with(demo, agent, expected: str, kind: str):
    ui = RecordingUI()
    outcome = await agent.turn(ToolDeps(demo.archive(), user="alice"), [], QUESTION, ui)
    assert outcome.error and expected in outcome.error, outcome.error
    first = ui.final.split("\n\n")[0]
    assert first.startswith("**The language model could not answer**") and expected in first, first
    assert "Traceback" not in ui.final and "test-key" not in ui.final
    # ... and the question still gets what search found, labelled as such
    assert "retrieval-only" in first and [c.id for c in ui.cards][:1] == ["2006.07357"]
    assert outcome.mode == "retrieval-only" and outcome.why and kind in outcome.why
    return ui


@pytest.mark.parametrize(
    "reply, expected, kind",
    [
        (failure(401), "the model's provider refused the API key (401)", "auth"),
        (failure(404, message="The model `scripted` does not exist", code="model_not_found"),
         "does not know the model `openai/scripted` (404)", "model"),
        (failure(400, message="This model's maximum context length is 4096 tokens. However, your messages resulted "
                              "in 9120 tokens.", code="context_length_exceeded"),
         "longer than the model's context window", "context"),
        (failure(429, retry_after="3600"), "is limiting requests (429)", "rate"),
    ],
    ids=["401", "404-model", "context-overflow", "429"],
)
async def test_a_provider_failure_names_itself_and_search_still_answers(demo, scripted, reply, expected, kind):
    scripted.enqueue(reply)
    await _fails_with(demo, agent_for(scripted, Pauses()), expected, kind)
    assert len(scripted.requests) == 1  # none of these is worth a retry (a 429 asking for an hour is not)


async def test_a_server_that_is_down_and_an_ollama_prefix_are_named(demo):
    config = LLMConfig(model="ollama/llama3.1", api_base="http://127.0.0.1:9", api_key=None, timeout=2)
    pauses = Pauses()
    ui = await _fails_with(demo, Agent(config, retrier=llm_retrier(async_sleep=pauses)),
                           "the model's server at http://127.0.0.1:9 cannot be reached", "unreachable")  # fmt: skip
    assert "try `ollama_chat/llama3.1`" in ui.final
    assert len(pauses) == 2  # connection failures were retried twice first


def test_misconfigurations_are_named():
    assert config_hints("openai/qwen2.5", "http://127.0.0.1:8000") == [
        "an OpenAI-compatible server's base URL usually ends in /v1 (`http://127.0.0.1:8000/v1`)"
    ]
    assert config_hints("openai/qwen2.5", "http://127.0.0.1:8000/v1/") == []
    assert config_hints("ollama_chat/qwen2.5", "http://127.0.0.1:11434") == []
    assert missing_key("anthropic/claude-3-5-haiku-latest", None) == "ANTHROPIC_API_KEY"
    assert missing_key("anthropic/claude-3-5-haiku-latest", "sk-given") is None


async def test_a_reasoning_models_thoughts_are_never_the_answer(demo, scripted):
    scripted.enqueue(
        tool_call("search_papers", query=QUESTION, limit=3),
        text("<think>Result [1] is Flor. I should search [2] too? No. Cite it.</think>Flor replays the log "
             "statements from checkpoints [1]."),
    )
    ui = RecordingUI()
    outcome = await agent_for(scripted).turn(ToolDeps(demo.archive(), user="alice"), [], QUESTION, ui)
    streamed = "".join(ui.streamed)
    assert "think" not in streamed and "I should search" not in streamed and "Cite it" not in streamed
    assert ui.final.startswith("Flor replays the log statements from checkpoints [")
    assert "Result [1] is Flor" not in ui.final and outcome.citations == [1] and outcome.mode == "agent"


def test_thoughts_split_across_pieces_are_hidden():
    whole = "Before <think>secret [9] thoughts</think> after, and <thin k> is text."
    for size in (1, 2, 3, 5, 7):
        thinking = ThinkingFilter()
        shown = "".join(thinking.feed(whole[i : i + size]) for i in range(0, len(whole), size))
        assert shown == "Before  after, and <thin k> is text.", size
    assert strip_thinking("<think>a</think>Answer <think>unclosed") == "Answer"
    assert strip_thinking("planning...</think>The answer") == "The answer"  # opened by the prompt template
    assert strip_thinking("No thoughts here.") == "No thoughts here."


def test_a_base_url_is_shown_without_its_credentials():
    from assistant.failures import _shown

    assert _shown("https://user:s3cret@llm.example:8443/v1?key=abc") == "https://llm.example:8443/v1"
    assert _shown(None) == ""
