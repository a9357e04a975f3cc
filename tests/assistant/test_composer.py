"""The one composer (`assistant.composer`): a reply's [n] read once, a text written from data linked as it is
written (the same text the old render-then-read gave), and the evidence behind each [n] kept with the conversation,
which still opens when a version before it stored it."""

from __future__ import annotations

import json
from dataclasses import asdict

from assistant.answer_line import AnswerLine
from assistant.composer import cited_numbers, compare_table, evidence_of, link_numbers, linked_listing
from assistant.conversation import Conversation
from assistant.tools.base import (
    Card,
    CardKind,
    Evidence,
    Listed,
    Notice,
    PaperListing,
    ProfileSummary,
    Quote,
    SourceBook,
    ToolResult,
)
from pages.compare import CompareCell, ComparePage, CompareRow

SOURCES = SourceBook({"2006.07357": (1, "Hindsight Logging", "/papers/2006.07357"),
                      "2005.02877": (2, "TripPy: A Triple Copy Strategy", "/papers/2005.02877")})  # fmt: skip


def test_a_reply_is_read_once_for_its_numbers():
    assert cited_numbers("Flor [2] replays [1, p. 7], again [2]; [1](/x) is a link, [1000] too long.") == [2, 1]
    assert cited_numbers("nothing cited") == []


def test_a_comparison_is_written_linked_as_reading_its_table_back_linked_it():
    cells = [CompareCell("Logs are | replayed.", "p. 7"), None]
    rows = [CompareRow("2006.07357", "Hindsight Logging", "/papers/2006.07357", "R. Garcia", cells),
            CompareRow("2005.02877", "TripPy", "/papers/2005.02877", "M. Heck", [CompareCell("DST [3]", "abstract"),
                                                                                  CompareCell("55.3%", "p. 6")])]
    page = ComparePage(["2006.07357", "2005.02877"], ["method", "result"], rows, [])
    numbers = {"2006.07357": 1, "2005.02877": 2}
    table, cited = compare_table(page, numbers, SOURCES.by_number())
    assert link_numbers("\n".join(page.table(numbers)), SOURCES.by_number()) == (link_numbers("\n".join(table), {})[0],
                                                                                 cited)  # fmt: skip
    assert cited == [1, 2] and "[[1, p. 7]](/papers/2006.07357)" in table[2]


def test_a_listing_is_linked_as_reading_its_text_back_linked_it():
    listing = PaperListing(("3 papers in this archive cite [x] \\[2\\].", Listed(2, "TripPy (2020); id 2005.02877"),
                            Listed(1, "Hindsight Logging; page /papers/2006.07357")))  # fmt: skip
    result = ToolResult(listing.to_markdown(), data=listing, sources=SOURCES)
    assert linked_listing(result) == link_numbers(result.output, SOURCES.by_number())
    summary = ToolResult(listing.to_markdown(), data=ProfileSummary("Kim has 2 papers.", "Kim", "/r/1", listing),
                         sources=SOURCES)  # fmt: skip
    assert linked_listing(summary) == link_numbers(summary.output, SOURCES.by_number())
    said = ToolResult("Error: no paper with id '[1]'", data=Notice("Error: no paper with id '[1]'"), sources=SOURCES)
    assert linked_listing(said) == (link_numbers(said.output, {})[0], [])


def test_the_evidence_is_what_was_shown_for_each_cited_number():
    quoted = Card(CardKind.PAPER, "2006.07357", "Hindsight Logging", "/papers/2006.07357", "", 1,
                  (Quote("Flor replays logs."), Quote("Replay is 10x faster.", 7)))  # fmt: skip
    bare = Card(CardKind.PAPER, "2005.02877", "TripPy", "/papers/2005.02877", "", 2)
    person = Card(CardKind.RESEARCHER, "7", "Bobby Yan", "/researchers/7-bobby-yan")
    line = AnswerLine("55.3% JGA", Evidence("… 55.3% JGA …", "2005.02877", 2, 6, about="TripPy", passage=41))
    evidence = evidence_of([quoted, bare, person], [1, 2], line)
    assert [(e.paper_id, e.number, e.text, e.page) for e in evidence] == [
        ("2005.02877", 2, "… 55.3% JGA …", 6), ("2006.07357", 1, "Flor replays logs.", None),
        ("2006.07357", 1, "Replay is 10x faster.", 7), ("2005.02877", 2, "", None)]
    assert evidence[0].about == "" and evidence[0].id == "2005.02877#passage-41"
    assert evidence_of([quoted, bare], [2]) == (Evidence("", "2005.02877", 2),)


def test_a_conversation_keeps_its_evidence_and_opens_when_stored_before_it_did():
    card = Card("paper", "2006.07357", "Hindsight Logging", "/papers/2006.07357", "2020", 1, (Quote("a sentence"),))
    kept = (Evidence("Replay is 10x faster.", "2006.07357", 1, 7, passage=3), Evidence("", "2005.02877", 2))
    conversation = Conversation([{"role": "user", "content": "q"}], SOURCES.copy(), (card,), evidence=kept)
    assert Conversation.from_dict(json.loads(json.dumps(conversation.to_dict()))) == conversation
    # Each answer's step keeps what that answer showed; a reopened thread gathers every step's.
    first = conversation.after([], [card], SOURCES.copy(), evidence=kept[:1])
    second = first.after([], [card], SOURCES.copy(), evidence=kept[1:])
    assert second.evidence == kept and second.latest == kept[1:]
    steps = [{"type": "assistant_message", "output": a, "metadata": json.dumps(c.answer_metadata("q"))}
             for a, c in (("a", first), ("b", second))]  # fmt: skip
    assert [len(json.loads(s["metadata"])["evidence"]) for s in steps] == [1, 1]
    assert Conversation.resumed(steps).evidence == kept
    # As the version before stored it: no evidence, quotes as text.
    older = {"history": [{"role": "user", "content": "q"}], "sources": {"2006.07357": [1, "Hindsight Logging",
             "/papers/2006.07357"]}, "focus": [{**asdict(card), "quotes": ["a sentence"]}], "focus_weak": False,
             "paper": None, "paper_checked": False, "about": None, "library": False}  # fmt: skip
    opened = Conversation.from_dict(json.loads(json.dumps(older)))
    assert opened.focus == (card,) and opened.evidence == () and opened.sources.by_number()[1][0] == "Hindsight Logging"
    resumed = Conversation.resumed([{"type": "assistant_message", "output": "a", "metadata": json.dumps(
        {"asked": "q", "sources": older["sources"], "focus": older["focus"], "turn": []})}])  # fmt: skip
    assert resumed.evidence == () and resumed.focus == (card,)
    broken = {**conversation.to_dict(), "evidence": [{"paper_id": 3}, "x", {"paper_id": "p", "number": True}]}
    assert Conversation.from_dict(broken).evidence == ()


def test_a_stored_judgement_is_shown_with_every_number_the_composer_read_in_it():
    """The saved questions' judge is checked with the composer's reader; the stored judgement is shown by
    `retrieval.library.watches.judgement_parts` (retrieval may not import the composer), which must link the same
    numbers, page-form citations included."""
    from assistant.composer import cited_numbers
    from retrieval.library.watches import judgement_parts

    text = "New work [2, p. 7] agrees with [1]; see [12,pp. 3-4] and not [3](/x) nor [a]."
    said = judgement_parts({"relation": "supports", "text": text, "sources": {"1": "a", "2": "b", "12": "c"}})
    linked = [pid for _, pid in said[1] if pid]
    assert cited_numbers(text) == [2, 1, 12] and linked == ["b", "a", "c"]
