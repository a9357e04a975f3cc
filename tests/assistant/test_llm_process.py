"""The chat's model requests in a child process (`assistant.llm_process`): the same items as in the server's own
process, failures in words, a stopped turn's request ended in the child, and a child that dies replaced."""

from __future__ import annotations

import asyncio

import pytest

from assistant.agent import Agent
from assistant.llm import Completion, LLMConfig, LLMError, stream_completion
from assistant.llm_process import DELTAS_EVERY, GONE, LLMProcess
from assistant.tools import ToolDeps
from harness.llm_server import failure, text, tool_call
from tests.assistant.test_agent import RecordingUI

HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def process():
    started = LLMProcess()
    assert started.wait_ready(60)
    yield started
    started.close()


def _config(server) -> LLMConfig:
    return LLMConfig(model="openai/scripted", api_base=server.api_base, api_key="test-key", timeout=20)


async def _items(stream) -> list:
    return [item async for item in stream]


async def test_the_child_streams_what_the_servers_own_client_would(process, scripted):
    """The same text and the same completion; deltas that arrive close together cross the pipe as one message (the
    first at once), and deltas further apart than `DELTAS_EVERY` one by one, as they came."""
    said = "Graph networks pass messages between the nodes of a graph, as the first paper shows [1]."
    answer, call = text(said), tool_call("search_papers", query="graph networks")
    paced = text("one two three four", pause=3 * DELTAS_EVERY)
    seen = []
    for reply in (answer, call, paced):
        scripted.enqueue(reply, reply)
        here = await _items(stream_completion(_config(scripted), HELLO, []))
        there = await _items(process.stream(_config(scripted), HELLO, []))
        assert there[-1] == here[-1] and isinstance(there[-1], Completion)
        assert "".join(there[:-1]) == "".join(here[:-1]) and there[:1] == here[:1]
        seen.append((here, there))
    (here, there), _, (paced_here, paced_there) = seen
    assert "".join(there[:-1]) == there[-1].text == said and 2 <= len(there) < len(here)
    assert seen[1][1][-1].tool_calls[0].name == "search_papers" and seen[1][1][-1].prompt_tokens
    assert paced_there == paced_here and len(paced_there) == 5
    assert process.started == 1


async def test_an_answer_asked_for_whole_comes_back_whole(process, scripted):
    """A reply nobody watches being written (a mended answer) is asked for in one piece, here and in the child: the
    completion alone, with the tokens the provider counted, and the request not streamed."""
    said = "Flor replays training from its checkpoints [1]."
    scripted.enqueue(text(said), text(said))
    here = await _items(stream_completion(_config(scripted), HELLO, [], whole=True))
    there = await _items(process.stream(_config(scripted), HELLO, [], whole=True))
    assert here == there and len(there) == 1 and there[0].text == said and there[0].completion_tokens
    assert len(scripted.requests) == 2 and not any(r.get("stream") for r in scripted.requests)


async def test_a_failure_comes_back_in_words_with_its_kind(process, scripted):
    scripted.enqueue(failure(401))
    with pytest.raises(LLMError) as failed:
        await _items(process.stream(_config(scripted), HELLO, []))
    assert failed.value.kind == "auth" and "refused the API key (401)" in str(failed.value)
    assert "test-key" not in str(failed.value)


async def test_a_stopped_turn_ends_its_request_in_the_child(process, scripted):
    scripted.enqueue(text("one two three four five six seven eight", pause=0.3), text("still here"))
    stream = process.stream(_config(scripted), HELLO, [])
    assert await anext(stream) == "one "
    await stream.aclose()  # the user's stop
    for _ in range(100):  # the provider sees its stream closed: the child stopped reading it
        if scripted.hung_up:
            break
        await asyncio.sleep(0.1)
    assert scripted.hung_up
    assert (await _items(process.stream(_config(scripted), HELLO, [])))[-1].text == "still here"


async def test_a_child_that_dies_fails_its_requests_and_the_next_gets_a_new_one(process, scripted):
    scripted.enqueue(text("a slow answer that will not finish", pause=0.5), text("answered by the new one"))
    before = process.started
    stream = process.stream(_config(scripted), HELLO, [])
    await anext(stream)
    process._process.kill()  # (an out-of-memory kill, a crash in a native library...)
    with pytest.raises(LLMError) as failed:
        await _items(stream)
    assert str(failed.value) == GONE and failed.value.kind == "unreachable"
    assert process.wait_ready(60) and process.started == before + 1
    assert (await _items(process.stream(_config(scripted), HELLO, [])))[-1].text == "answered by the new one"
    assert process._process.is_alive() and scripted.requests[-1]["messages"] == HELLO


async def test_until_the_child_is_ready_the_server_asks_itself(scripted):
    scripted.enqueue(text("asked at once"))
    fresh = LLMProcess()
    try:  # the first question right after a start is not held up by the child's import of litellm
        assert (await _items(fresh.stream(_config(scripted), HELLO, [])))[-1].text == "asked at once"
        assert fresh.started == 1 and not fresh._ready.is_set()
    finally:
        fresh.close()


async def test_the_agent_answers_through_the_child(process, demo, scripted):
    scripted.enqueue(
        tool_call("search_papers", query="replay log statements from checkpoints after training", limit=3),
        text("Hindsight logging replays log statements from checkpoints [1]."),
    )
    agent = Agent(_config(scripted), max_tool_rounds=3)
    agent.stream = process.stream
    ui = RecordingUI()
    outcome = await agent.turn(ToolDeps(demo.archive(), user="alice"), [], "How can I log after training?", ui)
    assert outcome.mode == "agent" and outcome.tool_calls == 1 and "(/papers/2006.07357-" in outcome.text
    assert ui.cards[0].id == "2006.07357" and outcome.usage.tokens > 0
    with pytest.raises(ValueError, match="no retrier"):  # a test's recorded pauses cannot cross to the child
        await _items(process.stream(_config(scripted), HELLO, [], retrier=object()))
