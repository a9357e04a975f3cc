"""The tools: schemas derived from their signatures (pinned), results, and failures the model can read."""

import json

import pytest

from assistant.tools import TOOLS, SourceBook, ToolDeps, call_tool, get_paper, search_papers, tool_schema
from assistant.tools.base import unavailable
from retrieval.archive import Archive
from tests.conftest import FIXTURES


def deps_for(demo, **kwargs) -> ToolDeps:
    return ToolDeps(demo.archive(), user="alice", **kwargs)


def test_schemas_are_pinned():
    pinned = json.loads((FIXTURES / "tool_schemas.json").read_text())
    assert [tool_schema(t) for t in TOOLS] == pinned


def test_search_papers_numbers_and_cards(demo):
    deps = deps_for(demo)
    result = call_tool(
        search_papers, deps, {"query": "replay log statements from checkpoints after training", "limit": 3}
    )
    assert not result.failed
    assert result.output.splitlines()[1].startswith("[1] Hindsight Logging for Model Training")
    assert result.cards[0].id == "2006.07357" and result.cards[0].number == 1
    assert result.cards[0].path == "/papers/2006.07357-hindsight-logging-for-model-training"
    assert result.cards[0].quotes
    # The same paper keeps its number in a later call of the conversation.
    again = call_tool(get_paper, deps.after(result), {"paper_id": "2006.07357v2"})
    assert again.output.startswith("Paper [1]:") and "Bobby Yan" in again.output
    # The turn's state is returned, never changed in place: the deps a tool ran with still hold no source.
    assert deps.sources.entries == {} and result.sources.by_number()[1][0] == "Hindsight Logging for Model Training"
    assert deps.after(result).sources is result.sources and len(again.sources.entries) == len(result.sources.entries)


def test_chat_about_one_paper_puts_it_first(demo):
    result = call_tool(search_papers, deps_for(demo, scope_paper_id="0704.0001"), {"query": "graph neural networks"})
    ids = [c.id for c in result.cards]
    assert ids[0] == "0704.0001" and len(ids) == 5 and len(set(ids)) == 5


def test_unknown_paper_is_a_readable_error(demo):
    result = call_tool(get_paper, deps_for(demo), {"paper_id": "9999.99999"})
    assert result.failed and result.output.startswith("Error: no paper with id '9999.99999'")


def test_invalid_arguments_are_a_readable_error(demo):
    result = call_tool(search_papers, deps_for(demo), {"limit": "many"})
    assert result.failed
    assert "query: Field required" in result.output and "limit" in result.output
    assert not unavailable(result)  # the request was wrong, nothing is down
    missing = call_tool(get_paper, deps_for(demo), {"paper_id": "9999.99999"})
    assert missing.failed and not unavailable(missing)  # an unknown paper is an answer, not an outage


def test_broken_store_reports_unavailable(demo):
    class BrokenIndex:
        def papers(self, *args, **kwargs):
            raise RuntimeError("disk on fire")

    deps = ToolDeps(Archive(demo.catalog(), BrokenIndex(), demo.embedder()), sources=SourceBook())
    result = call_tool(search_papers, deps, {"query": "graphs"})
    assert result.failed and result.output.startswith(
        "Error: search_papers is unavailable right now: it failed unexpectedly (RuntimeError)."
    )
    assert "disk on fire" not in result.output  # internals stay in the log
    assert unavailable(result)


async def test_the_index_going_away_mid_conversation_and_coming_back(demo, tmp_path, monkeypatch):
    """A Qdrant server that does not answer is IndexUnavailable (a real refused connection); when the index
    stops answering between two questions (injected at the store, as ClientStore reports a dropped server),
    the chat says "Search is unavailable right now"; when it answers again, so does the chat, with no restart."""
    from assistant.agent import Agent
    from assistant.retrieval_only import SEARCH_UNAVAILABLE
    from retrieval.vectors.index import Index
    from retrieval.vectors.store import IndexUnavailable
    from tests.assistant.test_agent import RecordingUI

    with pytest.raises(IndexUnavailable, match="cannot reach the vector index"):
        Index.open("scholarloom", path=tmp_path / "unused", url="http://127.0.0.1:9")
    index = demo.index()
    deps = ToolDeps(Archive(demo.catalog(), index, demo.embedder()))

    def down(*args, **kwargs):
        raise IndexUnavailable("cannot reach the vector index: [Errno 111] Connection refused")

    monkeypatch.setattr(index.store, "search", down)
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "graph neural networks", ui)
    assert ui.final == SEARCH_UNAVAILABLE
    assert "the search index did not answer" in ui.steps[0]["output"]
    monkeypatch.undo()
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "graph neural networks", ui)
    assert ui.final != SEARCH_UNAVAILABLE and ui.cards


def test_full_text_quotes_are_whole_sentences(demo):
    """Issue 39: a passage on a card is shown whole sentence to whole sentence: the fragments a passage begins and
    ends with (the PDF's text is cut by length) are left out, and a word is never cut in two."""
    from assistant.tools.papers import search_fulltext, whole_sentences

    passage = "by a copy mechanism. TripPy reaches 55.29% JGA on MultiWOZ 2.1. The slot gate is"
    assert whole_sentences(passage, 300) == "TripPy reaches 55.29% JGA on MultiWOZ 2.1."
    assert whole_sentences("One. Two sentences here. Three.", 12) == "One."
    endless = "A sentence that goes on and on " * 20
    long = whole_sentences(endless, 50)
    assert long.endswith(" …") and len(long) <= 52 and endless.startswith(long[:-2] + " ")  # cut at a space
    result = search_fulltext(deps_for(demo), "joint goal accuracy of TripPy on MultiWOZ 2.1")
    quotes = [q.text for card in result.cards for q in card.quotes]
    assert quotes and all(not q[:1].islower() and (q[-1] in ".!?\"')]" or q.endswith(" …")) for q in quotes), quotes
