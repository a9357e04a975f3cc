"""The conversation's state: rebuilt from a thread's stored steps, and read back from what a session stored."""

import json
from dataclasses import asdict

from assistant.conversation import Conversation, resumed_history
from assistant.tools import Card, SourceBook
from assistant.tools.base import Quote


def test_a_resumed_thread_keeps_a_question_whose_own_step_was_never_stored():
    """Chainlit stores a user's message in a background task that can land after the answer (CI saw it) or not
    before the thread is reopened; the answer's metadata names its question, so resume does not depend on it."""
    def user(text):
        return {"type": "user_message", "output": text}

    def answer(text, **meta):
        return {"type": "assistant_message", "output": text, "metadata": json.dumps(meta)}

    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "Flor [1]"}
    asked = "How do I add logging after training?"
    expected = [{"role": "user", "content": asked}, call, result, {"role": "assistant", "content": "Flor replays."}]

    # The question's step missing, present (once, not twice), and a thread stored before answers named it.
    assert resumed_history([answer("Flor replays.", asked=asked, turn=[call, result])])[0] == expected
    both = [user(asked), answer("Flor replays.", asked=asked, turn=[call, result])]
    assert resumed_history(both)[0] == expected
    assert resumed_history([user(asked), answer("Flor replays.", turn=[call, result])])[0] == expected

    # A greeting before the first question is left out; a card's request (no message) comes from its metadata; a
    # question that never got an answer stays, wherever it is; the last answer's metadata is returned.
    history, last = resumed_history(
        [
            answer("Hello!"),
            user("first, unanswered"),
            user("second"),
            answer("The server is busy: ... Try again in 3 s.", notice="busy"),  # the server's word, no answer
            answer("Two.", asked="second", sources={"2006.07357": [1]}),
            answer("Cited by none.", asked="What cites it?", paper="2006.07357"),
            user("third, unanswered"),
        ]
    )
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "first, unanswered"),
        ("user", "second"),
        ("assistant", "Two."),
        ("user", "What cites it?"),
        ("assistant", "Cited by none."),
        ("user", "third, unanswered"),
    ]
    assert last == {"asked": "What cites it?", "paper": "2006.07357"}
    # Metadata that is not an object (Chainlit writes "null" for none) reads as none.
    broken = [user("q"), {"type": "assistant_message", "output": "a", "metadata": "null"}, answer("b", asked="{")]
    assert [m["content"] for m in resumed_history(broken)[0]] == ["q", "a", "{", "b"]
    assert resumed_history([user("q"), {"type": "assistant_message", "output": "a", "metadata": "{oops"}])[1] == {}


def test_a_conversation_survives_its_dict_and_refuses_what_it_cannot_read():
    card = Card("paper", "2006.07357", "Hindsight Logging", "/papers/2006.07357", "2020", 1, (Quote("a sentence"),))
    sources = SourceBook({"2006.07357": (1, "Hindsight Logging", "/papers/2006.07357")})
    conversation = Conversation([{"role": "user", "content": "q"}], sources, (card,), "2006.07357", True)
    again = Conversation.from_dict(json.loads(json.dumps(conversation.to_dict())))
    assert again == conversation
    older = {**conversation.to_dict(), "focus": [{**asdict(card), "quotes": ["a sentence"]}]}  # quotes as text
    assert Conversation.from_dict(json.loads(json.dumps(older))) == conversation
    person = Card("researcher", "7", "Bobby Yan", "/researchers/7-bobby-yan", "1 paper here")
    opened = Conversation(paper_checked=True, about=person)  # from a researcher's page
    assert Conversation.from_dict(json.loads(json.dumps(opened.to_dict()))) == opened
    assert Conversation.resumed([{"type": "assistant_message", "output": "a",
                                  "metadata": json.dumps(opened.answer_metadata("q"))}]).about == person  # fmt: skip
    broken = {"history": "not a list", "sources": {"x": [1]}, "focus": [{"kind": "paper"}, 7], "paper": 3,
              "about": "someone"}  # fmt: skip
    assert Conversation.from_dict(broken) == Conversation()
    assert Conversation.from_dict(None) == Conversation()


def test_the_answer_metadata_holds_this_turn_and_resumes_the_same_conversation():
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "Flor [1]"}
    card = Card("researcher", "7", "Bobby Yan", "/researchers/7-bobby-yan")
    conversation = Conversation(paper="2006.07357", paper_checked=True)
    conversation.sources.entries["2006.07357"] = (1, "Hindsight Logging", "/papers/2006.07357")
    earlier = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one"}]
    turn = [{"role": "user", "content": "who?"}, call, result, {"role": "assistant", "content": "Bobby [1]."}]
    conversation = conversation.after(earlier + turn, [card], conversation.sources)
    meta = conversation.answer_metadata("who?")
    assert meta["turn"] == [call, result] and meta["asked"] == "who?" and meta["paper"] == "2006.07357"
    steps = [
        {"type": "assistant_message", "output": "one", "metadata": json.dumps({"asked": "first"})},
        {"type": "assistant_message", "output": "Bobby [1].", "metadata": json.dumps(meta)},
    ]
    resumed = Conversation.resumed(steps)
    assert resumed.history == conversation.history and resumed.sources == conversation.sources
    assert resumed.focus == (card,) and resumed.paper == "2006.07357" and resumed.paper_checked
    after = conversation.after(conversation.history, [], conversation.sources)  # a turn without cards keeps what
    assert after.focus == (card,) and after is not conversation  # it was about; the conversation is not changed
