"""compare_papers: the table for the model (every cell cites its paper, full-text cells their page), in
retrieval-only mode, and with a scripted model that writes the table from it."""

from __future__ import annotations

import re

from assistant.retrieval_only import NOTICE, answer_without_llm
from assistant.tools import ToolDeps, call_tool
from assistant.tools.compare import compare_papers
from assistant.turn import Question
from harness.llm_server import text, tool_call
from tests.assistant.test_agent import RecordingUI, agent_for
from pages.compare import ComparePage

PAPERS = ["2004.07180", "1802.05365", "2005.02877"]


def test_every_cell_names_its_paper_and_full_text_its_page(demo):
    deps = ToolDeps(demo.archive(), user="alice")
    result = call_tool(compare_papers, deps, {"paper_ids": [*PAPERS, "9999.99999"],
                                              "aspects": ["task", "data set", "training details"]})  # fmt: skip
    assert not result.failed and isinstance(result.data, ComparePage)
    compare_card, *papers = result.cards
    assert compare_card.kind == "compare" and compare_card.path == result.data.path
    assert compare_card.path.startswith("/compare?ids=2004.07180%2C1802.05365%2C2005.02877%2C9999.99999&aspects=")
    assert [(c.kind, c.id, c.number) for c in papers] == [("paper", p, n) for n, p in enumerate(PAPERS, start=1)]
    assert "Not in this archive (left out): 9999.99999" in result.output
    cells = [line for line in result.output.splitlines() if line.startswith("- ")]
    assert len(cells) == 9
    blocks = result.output.split("\n\n[")[1:]
    for n, block in enumerate(blocks, start=1):
        for line in block.splitlines()[1:]:
            cite = re.match(r"- [\w ]+ \[(\d+)(?:, p\. (\d+))?\]: ", line)
            assert cite and int(cite.group(1)) == n, line
    row = result.data.rows[0]
    for cell, line in zip(row.cells, blocks[0].splitlines()[1:], strict=True):
        assert (cell.where.startswith("p.")) == (", p. " in line.split(":")[0])
    assert any(c.where.startswith("p.") for r in result.data.rows for c in r.cells)
    nothing = call_tool(compare_papers, deps, {"paper_ids": ["9999.99999"]})
    assert nothing.failed and "no paper to compare" in nothing.output


async def test_retrieval_only_answers_a_comparison_with_the_table(demo):
    ui = RecordingUI()
    deps = ToolDeps(demo.archive(), user="alice")
    asked = Question.of("Compare 2004.07180, 1802.05365 and 2005.02877 on task and data set")
    outcome = await answer_without_llm(deps, asked, ui)
    assert [s["name"] for s in ui.steps] == ["compare_papers"]
    assert ui.steps[0]["arguments"]["aspects"] == ["task", "data set"]
    assert outcome.text.startswith(NOTICE) and "| Paper | task | data set |" in outcome.text
    rows = [line for line in outcome.text.splitlines() if line.startswith("| [\\[")]
    assert len(rows) == 3
    for n, line in enumerate(rows, start=1):  # each row, and each of its cells, cites its own paper
        assert line.startswith(f"| [\\[{n}\\]](/papers/{PAPERS[n - 1]}-")
        assert len(re.findall(rf"\[\\\[{n}(?:, p\. \d+)?\\\]\]\(/papers/{PAPERS[n - 1]}-", line)) == 3
    assert "[Open the table as a page](/compare?ids=" in outcome.text
    # "compare them" after an answer that showed papers compares those papers
    later = ToolDeps(demo.archive(), user="alice", focus=tuple(c for c in outcome.cards if c.kind == "paper")[:2])
    again = await answer_without_llm(later, Question.of("How do they compare in terms of method?"), RecordingUI())
    assert "| Paper | method |" in again.text and again.text.count("| [\\[") == 2


async def test_compare_them_compares_what_cleared_the_floor_in_its_order_or_asks_which(demo):
    """Issue 39: "compare them" takes the papers the last answer showed (those that cleared the relevance floor,
    best first); after an answer that found nothing that answers well, or one paper, it asks which papers."""
    from assistant.agent import Agent
    from assistant.conversation import Chat, Conversation

    chat = Chat(Agent(None), demo.archive(), "alice", Conversation())
    found = await chat.ask("papers about dialog evaluation", RecordingUI())
    assert len(found.cards) >= 2 and not found.weak
    table = await chat.ask("compare them on data set", RecordingUI())
    rows = [line for line in table.text.splitlines() if line.startswith("| [\\[")]
    shown = [f"/papers/{c.id}-" for c in found.cards]
    assert [next(p for p in shown if p in row) for row in rows] == shown  # the same papers, best first
    closest = await chat.ask("coral reef bleaching under ocean warming", RecordingUI())
    assert closest.weak and closest.cards and chat.conversation.focus_weak
    ui = RecordingUI()
    asked = await chat.ask("compare them", ui)
    assert ui.steps == [] and "Which papers should I compare?" in asked.text and "closest matches" in asked.text
    one = await chat.ask("What is SPECTER and how is it trained?", RecordingUI())
    assert [c.id for c in one.cards] == ["2004.07180"] and not chat.conversation.focus_weak
    asked = await chat.ask("How do they compare on method?", RecordingUI())
    assert "Which papers should I compare?" in asked.text and "showed one paper" in asked.text
    # a reopened thread keeps knowing that its last cards were only the closest matches
    assert Conversation.from_dict(chat.conversation.to_dict()) == chat.conversation


async def test_a_model_writes_the_table_from_the_cells(demo, scripted):
    scripted.enqueue(
        tool_call("compare_papers", paper_ids=PAPERS[:2], aspects=["data set", "main result"]),
        text("| Paper | Data set | Main result |\n| --- | --- | --- |\n"
             "| SPECTER [1] | SciDocs, a new benchmark [1] | beats the baselines [1] |\n"
             "| ELMo [2] | a large text corpus [2] | better on six NLP problems [2] |"),
    )  # fmt: skip
    ui = RecordingUI()
    outcome = await agent_for(scripted).turn(ToolDeps(demo.archive(), user="alice"), [], "Compare SPECTER and ELMo", ui)
    told = scripted.requests[1]["messages"][-1]["content"]  # what the model read: the cells, each with its [n]
    assert told.startswith("Comparison of 2 papers on data set, main result")
    assert "- data set [1]: " in told and "- main result [2]: " in told
    assert "[\\[1\\]](/papers/2004.07180-" in outcome.text and "[\\[2\\]](/papers/1802.05365-" in outcome.text
    assert outcome.citations == [1, 2]
    assert [c.kind for c in ui.cards][:1] == ["compare"] and ui.cards[0].path.startswith("/compare?ids=")
