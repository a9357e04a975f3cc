"""Models that cannot call tools, or call them badly: the search-then-write pipeline answers with the same
citations, calls written as text or in Python's syntax are recovered, and the mode says which way it went."""

from __future__ import annotations

from assistant.agent import Agent
from assistant.llm import LLMConfig, calls_in_text, llm_retrier, read_arguments
from assistant.pipeline import plain_history, search_queries
from assistant.probe import probe
from assistant.tools import ToolDeps
from harness.llm_server import _chunks, raw_tool_call, text
from tests.assistant.test_agent import Pauses, RecordingUI, agent_for

QUESTION = "How can I add log statements after a model has finished training?"
ANSWER = "Flor records checkpoints during training and replays them to run log statements added later [1]."


def _no_tools(replies: list[dict]):
    """A model served without tool support: a request offering tools gets Ollama's 400, the others the replies."""

    def respond(body: dict) -> dict:
        if body.get("tools"):
            return {"status": 400, "retry_after": None, "message": "registry.ollama.ai/library/gemma:2b does not "
                    "support tools", "code": None}  # fmt: skip
        return replies.pop(0) if replies else text("(nothing left to say)")

    return respond


def _config(scripted) -> LLMConfig:
    return LLMConfig(model="openai/scripted", api_base=scripted.api_base, api_key="test-key", timeout=20)


async def test_a_model_without_tools_answers_through_the_pipeline_with_citations(demo, scripted):
    scripted.responder = _no_tools([text("ready"), text("1 2 3"),  # the probe
                                    text("1. hindsight logging replay\n2. \"log statements after training\""),
                                    text(ANSWER, pause=0.001)])  # fmt: skip
    found = await probe(_config(scripted))
    assert found.error is None and found.answers and not found.calls_tools and found.mode == "pipeline"
    agent = Agent(_config(scripted), retrier=llm_retrier(async_sleep=Pauses()))
    agent.probed_tools = lambda: found.calls_tools
    ui = RecordingUI()
    outcome = await agent.turn(ToolDeps(demo.archive(), user="alice"), [], QUESTION, ui)

    assert outcome.mode == "pipeline" and "did not call a tool when probed" in outcome.why
    assert [(s["name"], s["arguments"]["query"]) for s in ui.steps] == [
        ("search_papers", "hindsight logging replay"), ("search_papers", "log statements after training"),
        ("search_fulltext", "hindsight logging replay")]  # fmt: skip
    asked = scripted.requests[-2:]  # the rewrite, then the writing; neither offers tools
    assert not any(r.get("tools") for r in asked)
    written = asked[1]["messages"][-1]["content"]
    assert written.startswith(QUESTION) and "<results>" in written and "Hindsight Logging for Model Training" in written
    assert "Flor records checkpoints" in "".join(ui.streamed)  # the answer streams as it is written
    assert r"[\[1\]](/papers/2006.07357" in ui.final and "**Sources**" in ui.final and outcome.citations == [1]
    assert [c.id for c in ui.cards] == ["2006.07357"]


async def test_tools_switched_off_use_the_pipeline_and_name_a_researcher(demo, scripted):
    scripted.enqueue(text("Bobby Yan research"), text("Bobby Yan works on model training tools [1]."))
    agent = Agent(_config(scripted), retrier=llm_retrier(async_sleep=Pauses()), tools="off")
    ui = RecordingUI()
    outcome = await agent.turn(ToolDeps(demo.archive(), user="alice"), [], "What does Bobby Yan work on?", ui)
    assert outcome.mode == "pipeline" and "SCHOLARLOOM_LLM_TOOLS=off" in outcome.why
    assert ui.steps[0]["name"] == "summarize_researcher"  # a name the catalog knows: its profile is searched too
    assert "summarize_researcher" in scripted.requests[1]["messages"][-1]["content"]  # the writing request
    assert r"[\[1\]](/papers/" in ui.final


async def test_calls_that_cannot_be_read_twice_fall_back_to_the_pipeline(demo, scripted):
    scripted.enqueue(
        raw_tool_call("search_papers", '{"query": "hindsight logging", "limit": 3'),  # cut off
        raw_tool_call("search_papers", "query=hindsight logging"),
        text("hindsight logging"),  # the pipeline's rewrite
        text(ANSWER),
    )
    ui = RecordingUI()
    outcome = await agent_for(scripted).turn(ToolDeps(demo.archive(), user="alice"), [], QUESTION, ui)
    assert outcome.mode == "pipeline" and "tool calls could not be read" in outcome.why
    told = [m["content"] for m in scripted.requests[1]["messages"] if m["role"] == "tool"]
    assert told and "are not a JSON object" in told[0]  # the model was told what failed, once
    assert r"[\[1\]](/papers/2006.07357" in ui.final and outcome.tool_calls == 1 + 2  # one unreadable call told, then two searches


async def test_python_style_arguments_and_calls_written_as_text_are_recovered(demo, scripted):
    scripted.enqueue(
        raw_tool_call("search_papers", "{'query': 'hindsight logging', 'limit': 3}"),
        text('```json\n{"name": "search_fulltext", "arguments": {"query": "replay log statements"}}\n```'),
        text(ANSWER),
    )
    ui = RecordingUI()
    outcome = await agent_for(scripted).turn(ToolDeps(demo.archive(), user="alice"), [], QUESTION, ui)
    assert outcome.mode == "agent" and [s["name"] for s in ui.steps] == ["search_papers", "search_fulltext"]
    assert ui.steps[0]["arguments"] == {"query": "hindsight logging", "limit": 3}
    assert "search_fulltext" not in "".join(ui.streamed)  # the call written as text was never shown
    assert r"[\[1\]](/papers/2006.07357" in ui.final


def test_reading_queries_arguments_and_written_calls():
    assert search_queries("<think>hmm</think>\n- Query 1: graph networks\n* \"graph networks\"\n3) molecules\n4) x",
                          "q") == ["graph networks", "molecules"]  # fmt: skip
    assert search_queries(" \n-\n", "graph learning?") == ["graph learning?"]  # nothing usable: the question
    assert read_arguments("{'a': True, 'b': None}") == {"a": True, "b": None}
    assert read_arguments("") == {} and read_arguments("[1]") is None and read_arguments("__import__('os')") is None
    known = {"search_papers"}
    assert [c.name for c in calls_in_text('[{"tool": "search_papers", "parameters": {"query": "x"}}]', known)] == [
        "search_papers"]  # fmt: skip
    assert calls_in_text('{"name": "delete_everything", "arguments": {}}', known) == []
    assert calls_in_text("The answer is {1, 2}.", known) == []
    assert calls_in_text('{"function": "search_papers"}', known) == [] and read_arguments("{[1]: 2}") is None
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": []},
               {"role": "tool", "content": "r"}, {"role": "assistant", "content": "a"}]  # fmt: skip
    assert plain_history(history) == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    pieces = [c["choices"][0]["delta"].get("tool_calls", [{}])[0].get("function", {}).get("arguments", "")
              for c in _chunks(raw_tool_call("t", "{'a': 1}"), "m")]  # fmt: skip
    assert "".join(pieces) == "{'a': 1}"  # the stand-in sends a raw call's arguments as they were given


async def test_a_cancelled_turn_closes_the_request_and_keeps_what_was_written(scripted):
    import asyncio

    from assistant.conversation import STOPPED, Chat, Conversation

    scripted.enqueue(text("Flor replays log statements from checkpoints " * 5, pause=0.2))
    ui, chat = RecordingUI(), Chat(agent_for(scripted), None, "alice", Conversation())
    turn = asyncio.create_task(chat.ask(QUESTION, ui))
    while len("".join(ui.streamed)) < 20:
        await asyncio.sleep(0.05)
    turn.cancel()
    try:
        await turn
    except asyncio.CancelledError:
        pass
    for _ in range(40):
        if scripted.hung_up:
            break
        await asyncio.sleep(0.05)
    assert scripted.hung_up, "the request was not closed"
    assert ui.final.startswith("Flor replays") and ui.final.endswith(STOPPED)
    kept = [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ui.final}]
    assert chat.conversation.history == kept


def test_a_turns_usage_reported_estimated_and_priced():
    from assistant.llm import Completion
    from assistant.turn import TurnUsage

    used = TurnUsage()
    used.add("openai/gpt-4o-mini", [{"content": "x" * 400}], Completion(text="y" * 40, prompt_tokens=1000,
                                                                          completion_tokens=100))  # fmt: skip
    assert (used.prompt_tokens, used.completion_tokens, used.estimated) == (1000, 100, False)
    assert used.cost_usd is not None and 0 < used.cost_usd < 0.01  # litellm's price list knows this model
    used.add("ollama_chat/qwen2.5", [{"content": "x" * 400}], Completion(text="y" * 40))  # nothing reported
    assert (used.prompt_tokens, used.completion_tokens, used.estimated) == (1100, 110, True)
    assert used.tokens == 1210
