"""The full-text tool: page-numbered passages with citation numbers, scoped chats first, clear failures."""

from assistant.tools import ToolDeps, call_tool, search_fulltext
from assistant.composer import link_numbers as link_citations
from tests.conftest import LONGEVAL, S2ORC


def _deps(settings, scope=None):
    return ToolDeps(settings.archive(), user="ann", scope_paper_id=scope)


def test_passages_come_with_numbers_pages_and_cards(fulltext):
    settings, _, _ = fulltext
    deps = _deps(settings)
    result = call_tool(
        search_fulltext, deps, {"query": "How large is the corpus used to pretrain S2ORC-SciBERT, in tokens?"}
    )
    assert not result.failed
    first = result.output.splitlines()[1]
    assert first.startswith("[1, p. 7, section 'Pretraining BERT on S2ORC'] S2ORC: The Semantic Scholar")
    assert result.cards[0].id == S2ORC and str(result.cards[0].quotes[0]).startswith("p. 7: ")
    answer, cited = link_citations("It has 16.4B tokens [1, p. 7].", result.sources.by_number())
    assert cited == [1] and f"[\\[1, p. 7\\]](/papers/{S2ORC}-" in answer


def test_one_paper_only_and_unknown_ids(fulltext):
    settings, _, _ = fulltext
    deps = _deps(settings)
    result = call_tool(search_fulltext, deps, {"query": "annotators", "paper_id": f"{LONGEVAL}v1", "limit": 3})
    assert [c.id for c in result.cards] == [LONGEVAL]
    failed = call_tool(search_fulltext, deps, {"query": "annotators", "paper_id": "0000.00000"})
    assert failed.failed and "no paper with id '0000.00000'" in failed.output


def test_a_scoped_chat_reads_its_paper_first(fulltext):
    settings, _, _ = fulltext
    deps = _deps(settings, scope=S2ORC)
    result = call_tool(search_fulltext, deps, {"query": "human evaluation of long-form summaries", "limit": 4})
    assert result.cards[0].id == S2ORC  # the chat's paper leads even though the other paper matches better
    assert {c.id for c in result.cards} == {S2ORC, LONGEVAL}
