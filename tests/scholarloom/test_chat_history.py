"""Chat history over the real socket and routes: it survives, resumes with the agent's context, follow-ups see
earlier tool results, cards act, and one user never reaches another's threads, elements or files."""

import asyncio
import json
import re
import uuid

import httpx
import pytest

from harness.llm_server import text, tool_call
from tests.chat_server import ChatClient

FLOR = "2006.07357"


async def _converse(server, scripted, user="alice") -> tuple[ChatClient, str]:
    """One signed-in turn with a tool call; returns the client (still connected) and the new thread's id."""
    scripted.enqueue(
        tool_call("search_papers", query="replay log statements from checkpoints after training"),
        text("Flor replays log statements from checkpoints [1]."),
    )
    chat = ChatClient(server, user)
    await chat.connect()
    await chat.ask("How do I add logging after training?")
    thread_id = (await chat.wait_for("first_interaction"))["thread_id"]
    return chat, thread_id


async def _thread(chat: ChatClient, thread_id: str) -> httpx.Response:
    async with chat.http() as http:
        return await http.get(f"/chat/project/thread/{thread_id}")


async def _settled(chat: ChatClient, thread_id: str, assistant_messages: int) -> dict:
    """The stored thread once its writes have landed: Chainlit makes them in background tasks that finish in no
    set order (a user's message can land after the answer to it), so this waits for every turn's question and
    finished answer, then for two reads in a row that agree."""
    last = None
    for _ in range(100):
        answer = await _thread(chat, thread_id)
        if answer.status_code == 200:
            thread = answer.json()
            kinds = [s["type"] for s in thread["steps"]]
            done = [
                s for s in thread["steps"] if s["type"] == "assistant_message" and s.get("metadata", {}).get("turn")
            ]
            if len(done) >= assistant_messages and kinds.count("user_message") >= assistant_messages:
                if last == thread:
                    return thread
                last = thread
        await asyncio.sleep(0.1)
    raise AssertionError(f"thread {thread_id} was not stored")


async def test_history_survives_and_a_resumed_thread_keeps_its_context(server, scripted, history):
    chat, thread_id = await _converse(server, scripted)
    await chat.sio.disconnect()
    thread = await _settled(chat, thread_id, 1)
    assert thread["userIdentifier"] == "alice" and thread["name"] == "How do I add logging after training?"
    kinds = [s["type"] for s in thread["steps"]]
    assert "user_message" in kinds and "tool" in kinds and "assistant_message" in kinds
    (done,) = [s for s in thread["steps"] if s["type"] == "assistant_message"]
    done_meta = done["metadata"] if isinstance(done["metadata"], dict) else json.loads(done["metadata"])
    assert done_meta["asked"] == "How do I add logging after training?"  # resume does not need the question's step
    (card,) = [e for e in thread["elements"] if e["name"] == "ScholarCard"]
    props = card["props"] if isinstance(card["props"], dict) else json.loads(card["props"])
    assert props["id"] == FLOR and props["path"].startswith("/papers/2006.07357") and props["number"] == 1
    async with chat.http() as http:
        listed = (await http.post("/chat/project/threads", json={"pagination": {"first": 20}, "filter": {}})).json()
    assert thread_id in [t["id"] for t in listed["data"]]
    # Whatever Chainlit saved into the thread's metadata, never the conversation a second time (the steps hold
    # it; test_thread_metadata_never_holds_the_conversation checks the save itself, which races here).
    metadata = (await _thread(chat, thread_id)).json().get("metadata") or {}
    metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
    assert not {"history", "sources", "focus"} & set(metadata) and "Hindsight Logging" not in json.dumps(metadata)

    # Reopen it (a reload): the UI gets the whole conversation back, and the agent its context.
    again = ChatClient(server)
    again.token = chat.token
    await again.connect(thread_id=thread_id)
    resumed = await again.wait_for("resume_thread")
    assert resumed["id"] == thread_id and any(s["type"] == "tool" for s in resumed["steps"])
    scripted.enqueue(text("It needs the checkpoints it wrote during training [1]."), text("It needs checkpoints [1]."))
    await again.ask("What does it need for that?")
    await again.sio.disconnect()
    # The check reads [1] against what the thread's first turn showed of it, stored with the thread: what the
    # model is sent back (once) quotes it.
    mend = scripted.requests[-1]["messages"][-1]["content"]
    assert "<source>" in mend and "log" in mend.split("<source>", 1)[1] and "It needs the checkpoints" in mend
    sent = scripted.requests[-2]["messages"]
    assert sent[1] == {"role": "user", "content": "How do I add logging after training?"}
    assert sent[2]["tool_calls"][0]["function"]["name"] == "search_papers"
    assert sent[3]["role"] == "tool" and "Hindsight Logging for Model Training" in sent[3]["content"]
    assert sent[4]["role"] == "assistant" and sent[4]["content"].startswith("Flor replays log statements")
    assert sent[-1] == {"role": "user", "content": "What does it need for that?"}
    assert f"[1] Hindsight Logging for Model Training (id {FLOR})" in sent[0]["content"]  # same numbers
    final = again.messages("assistant_message")[-1]["output"]
    assert "[\\[1\\]](/papers/2006.07357" in final  # [1] still means the same paper


async def test_a_follow_up_sees_what_the_last_turn_found(server, scripted, history):
    """ "Who else did she write with?" is answerable only with the researcher the first turn looked up: the second
    request carries the first turn's tool call and result (with the researcher's id), not just its prose."""
    scripted.enqueue(
        tool_call("find_researcher", name="Bobby Yan"),
        text("Bobby Yan works on machine learning systems."),
    )
    chat = ChatClient(server)
    await chat.connect()
    await chat.ask("What does Bobby Yan work on?")
    first_result = [m for m in scripted.requests[-1]["messages"] if m["role"] == "tool"][0]["content"]
    researcher_id = int(first_result.split("(researcher id ", 1)[1].split(";")[0])
    # (Its [1] is no paper the profile numbered: found nowhere, sent back once, kept and marked.)
    scripted.enqueue(tool_call("get_researcher", researcher_id=researcher_id), text("With Rolando Garcia [1]."),
                     text("With Rolando Garcia [1]."))  # fmt: skip
    await chat.ask("Who else did she write with?")
    await chat.sio.disconnect()
    second = scripted.requests[-3]["messages"]  # the follow-up's first request to the model
    assert [m["role"] for m in second[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    assert second[2]["tool_calls"][0]["function"]["name"] == "find_researcher"
    assert f"(researcher id {researcher_id};" in second[3]["content"]
    (step,) = [s for s in chat.messages("tool") if s["name"] == "get_researcher"]
    assert "Bobby Yan" in step["output"]


async def test_another_users_thread_is_a_thread_that_does_not_exist(server, scripted, history):
    alice, thread_id = await _converse(server, scripted)
    await alice.sio.disconnect()
    thread = await _settled(alice, thread_id, 1)
    element = thread["elements"][0]
    bob = ChatClient(server, "bob")
    await bob.connect()
    await bob.sio.disconnect()
    missing = str(uuid.uuid4())
    async with bob.http() as http:
        for target in (thread_id, missing):
            read = await http.get(f"/chat/project/thread/{target}")
            part = await http.get(f"/chat/project/thread/{target}/element/{element['id']}")
            rename = await http.put("/chat/project/thread", json={"threadId": target, "name": "mine now"})
            delete = await http.request("DELETE", "/chat/project/thread", json={"threadId": target})
            for answer in (read, part, rename, delete):
                assert (answer.status_code, answer.json()) == (404, {"detail": "Thread not found"})
        listed = (await http.post("/chat/project/threads", json={"pagination": {"first": 50}, "filter": {}})).json()
        assert thread_id not in [t["id"] for t in listed["data"]]
        file_key = element["objectKey"]
        foreign_file = await http.get(f"/chat-files/{file_key}")
        no_file = await http.get(f"/chat-files/{file_key.split('/')[0]}/{missing}/ScholarCard")
        assert foreign_file.status_code == no_file.status_code == 404 and foreign_file.text == no_file.text
    async with alice.http() as http:
        assert (await http.get(f"/chat-files/{element['objectKey']}")).status_code == 200

    # Over the socket: resuming Alice's thread answers exactly as for a thread that does not exist, and what Bob
    # then writes lands in a thread of his own.
    answers = []
    for target in (thread_id, missing, "1' OR '1'='1"):
        probe = ChatClient(server, "bob")
        probe.token = bob.token
        await probe.connect(thread_id=target)
        answers.append(await probe.wait_for("resume_thread_error"))
        assert not probe.event("resume_thread")
        if target == thread_id:
            scripted.enqueue(text("Nothing to see."))
            await probe.ask("Show me the earlier answer.")
            taken = (await probe.wait_for("first_interaction"))["thread_id"]
            assert taken != thread_id
        await probe.sio.disconnect()
    assert answers == ["Thread not found."] * 3
    after = await _thread(alice, thread_id)
    assert after.status_code == 200 and after.json()["userIdentifier"] == "alice"
    assert [s["id"] for s in after.json()["steps"]] == [s["id"] for s in thread["steps"]]


async def test_owner_renames_and_deletes(server, scripted, history):
    alice, thread_id = await _converse(server, scripted)
    await alice.sio.disconnect()
    thread = await _settled(alice, thread_id, 1)
    async with alice.http() as http:
        assert (await http.put("/chat/project/thread", json={"threadId": thread_id, "name": "Flor"})).status_code == 200
        assert (await http.get(f"/chat/project/thread/{thread_id}")).json()["name"] == "Flor"
        gone = await http.request("DELETE", "/chat/project/thread", json={"threadId": thread_id})
        assert gone.status_code == 200
        assert (await http.get(f"/chat/project/thread/{thread_id}")).status_code == 404
        assert (await http.get(f"/chat-files/{thread['elements'][0]['objectKey']}")).status_code == 404


async def test_a_cards_button_runs_its_tool(server, scripted, history):
    chat, thread_id = await _converse(server, scripted)
    async with chat.http() as http:
        pressed = await http.post(
            "/chat/project/action",
            json={
                "sessionId": chat.session_id,
                "action": {"name": "show_cited_by", "payload": {"id": FLOR, "title": "Hindsight Logging"}},
            },
        )
    assert pressed.status_code == 200 and pressed.json()["success"] is True
    for _ in range(200):
        if "cite" in chat.messages("assistant_message")[-1]["output"]:
            break
        await asyncio.sleep(0.05)
    (step,) = [s for s in chat.messages("tool") if s["name"] == "get_cited_by"]
    assert json.loads(step["input"]) == {"paper_id": FLOR}
    shown = chat.messages("assistant_message")[-1]["output"]
    assert "cite" in shown and FLOR in shown
    # Bob cannot press buttons in Alice's session.
    bob = ChatClient(server, "bob")
    await bob.connect()
    async with bob.http() as http:
        refused = await http.post(
            "/chat/project/action",
            json={"sessionId": chat.session_id, "action": {"name": "show_references", "payload": {"id": FLOR}}},
        )
    assert refused.status_code == 401
    await bob.sio.disconnect()
    await chat.sio.disconnect()


async def test_cards_reach_the_page_and_the_stored_thread_best_first_whatever_their_numbers(server, scripted, history):
    """Issue 39: a later answer whose papers were numbered by earlier ones shows its cards in its own order (best
    first), live and in the reopened thread: Chainlit sent a message's elements at once, each arriving when its
    file was written."""
    scripted.enqueue(
        tool_call("search_papers", query="evaluation of dialog systems", limit=5), text("Here they are."),
        tool_call("search_papers", query="dialog state tracking", limit=5), text("And these."),
    )  # fmt: skip
    chat = ChatClient(server)
    await chat.connect()
    await chat.ask("Which papers evaluate dialog systems?")
    thread_id = (await chat.wait_for("first_interaction"))["thread_id"]
    await chat.ask("And dialog state tracking?")
    await chat.sio.disconnect()
    listed = chat.messages("tool")[-1]["output"]
    numbers = [int(n) for n in re.findall(r"^\\\[(\d+)\\\] ", listed, re.M)]  # the tool's order: best first
    assert len(numbers) >= 3 and numbers != sorted(numbers)  # some numbered by the first answer
    answer = chat.messages("assistant_message")[-1]["id"]
    live = [e["props"]["number"] for e in chat.event("element") if e.get("forId") == answer
            and e["name"] == "ScholarCard"]  # fmt: skip
    assert live == numbers
    thread = await _settled(chat, thread_id, 2)
    stored = [json.loads(e["props"]) if isinstance(e["props"], str) else e["props"] for e in thread["elements"]
              if e["forId"] == answer and e["name"] == "ScholarCard"]  # fmt: skip
    assert [p["number"] for p in stored] == numbers


@pytest.mark.parametrize("thread_id", ["not-a-uuid", "x'); DROP TABLE threads; --"])
async def test_thread_ids_must_be_uuids(server, history, thread_id):
    """Chainlit builds one of its queries by pasting thread ids into SQL; ids that are not UUIDs never get stored."""
    refused = await history.update_thread(thread_id, name="x")
    assert refused is None and history.failures[-1].startswith("refused thread id")
    history.failures.pop()  # expected here
    assert await history.get_thread(thread_id) is None


async def test_feedback_only_on_ones_own_answers(server, scripted, history):
    """Chainlit's feedback routes do not check who owns the step; the data layer does (and uses the step's own
    thread, not the one the client names)."""
    alice, thread_id = await _converse(server, scripted)
    await alice.sio.disconnect()
    thread = await _settled(alice, thread_id, 1)
    answer = next(s for s in thread["steps"] if s["type"] == "assistant_message")
    bob = ChatClient(server, "bob")
    await bob.connect()
    await bob.sio.disconnect()
    async with bob.http() as http:
        forged = {"forId": answer["id"], "value": 0, "threadId": thread_id, "comment": "bob was here"}
        await http.put("/chat/feedback", json={"feedback": forged, "sessionId": bob.session_id})
    async with alice.http() as http:
        mine = {"forId": answer["id"], "value": 1, "comment": "useful"}
        stored = await http.put("/chat/feedback", json={"feedback": mine, "sessionId": alice.session_id})
    assert stored.status_code == 200, stored.text
    feedback_id = stored.json()["feedbackId"]
    async with bob.http() as http:
        await http.request("DELETE", "/chat/feedback", json={"feedbackId": feedback_id})
        overwrite = {"id": feedback_id, "forId": answer["id"], "value": 0, "comment": "mine now"}
        await http.put("/chat/feedback", json={"feedback": overwrite, "sessionId": bob.session_id})
    rows = await history.execute_sql('SELECT "value", "comment", "threadId" FROM feedbacks WHERE "forId" = :f',
                                     {"f": answer["id"]})  # fmt: skip
    assert rows == [{"value": 1, "comment": "useful", "threadId": thread_id}]


async def test_threads_cannot_be_shared_while_sharing_is_off(server, scripted, history):
    """Chainlit's share routes answer although `allow_thread_sharing` is false: we refuse them in front."""
    chat, thread_id = await _converse(server, scripted)
    await _settled(chat, thread_id, 1)
    async with chat.http() as http:
        shared = await http.put("/chat/project/thread/share", json={"threadId": thread_id, "isShared": True})
    assert shared.status_code == 404
    async with httpx.AsyncClient(base_url=server) as anonymous:
        assert (await anonymous.get(f"/chat/project/share/{thread_id}")).status_code == 404
    metadata = (await _thread(chat, thread_id)).json().get("metadata") or {}
    assert not (metadata if isinstance(metadata, dict) else {}).get("is_shared")
    await chat.sio.disconnect()


async def test_elements_of_another_users_thread_cannot_be_added_or_deleted(server, scripted):
    """Chainlit's PUT and DELETE /project/element take the thread and element ids from the client; Bob names
    Alice's (issue 17, item 5)."""
    alice, thread_id = await _converse(server, scripted)
    await alice.sio.disconnect()
    thread = await _settled(alice, thread_id, 1)
    (card,) = [e for e in thread["elements"] if e["name"] == "ScholarCard"]
    bob = ChatClient(server, "bob")
    await bob.connect()  # the routes act through the caller's own live session, once it has a first message
    scripted.enqueue(text("Hello Bob."))
    await bob.ask("Hello")
    planted = {"type": "custom", "id": str(uuid.uuid4()), "threadId": thread_id, "forId": thread["steps"][-1]["id"],
               "name": "ScholarCard", "display": "inline", "props": {"title": "Planted by Bob"}}  # fmt: skip
    theirs = {"type": "custom", "id": card["id"], "threadId": thread_id, "forId": card["forId"], "name": "ScholarCard",
              "display": "inline", "props": {}}  # fmt: skip
    async with bob.http() as http:
        put = await http.put("/chat/project/element", json={"sessionId": bob.session_id, "element": planted})
        delete = await http.request("DELETE", "/chat/project/element", json={"sessionId": bob.session_id,
                                                                             "element": theirs})  # fmt: skip
    assert put.status_code == delete.status_code == 200  # Chainlit says yes; the data layer did nothing
    await asyncio.sleep(1)  # Chainlit writes elements in background tasks
    await bob.sio.disconnect()
    after = (await _thread(alice, thread_id)).json()
    assert [e["id"] for e in after["elements"]] == [e["id"] for e in thread["elements"]]
    async with alice.http() as http:
        assert (await http.get(f"/chat-files/{card['objectKey']}")).status_code == 200


async def test_a_conversation_exports_as_markdown_and_a_reading_list_to_its_owner_only(server, scripted, history):
    chat, thread_id = await _converse(server, scripted)
    await chat.sio.disconnect()
    await _settled(chat, thread_id, 1)
    async with chat.http() as http:
        exported = await http.get(f"/me/threads/{thread_id}.md")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/markdown")
    assert "attachment" in exported.headers["content-disposition"]
    text = exported.text
    assert text.startswith("# How do I add logging after training?")
    assert "## Question\n\nHow do I add logging after training?" in text
    assert "## Answer\n\nFlor replays log statements from checkpoints" in text
    # The check's marks are part of the answer, kept in the file.
    assert "2006.07357-hindsight-logging-for-model-training). ✓" in text and "**Citations checked**: 1 of 1" in text
    assert f"]({server}/papers/2006.07357-hindsight-logging-for-model-training)" in text  # the numbered source
    async with chat.http() as http:
        reading = await http.get(f"/me/threads/{thread_id}.bib")
    assert reading.status_code == 200 and reading.headers["content-type"].startswith("application/x-bibtex")
    import bibtexparser

    assert [e["eprint"] for e in bibtexparser.parse_string(reading.text).entries] == ["2006.07357"]
    bob = ChatClient(server, "bob")
    await bob.connect()
    await bob.sio.disconnect()
    async with bob.http() as http:
        for suffix in (".md", ".bib"):
            for thread in (thread_id, uuid.uuid4(), "not-a-thread"):
                assert (await http.get(f"/me/threads/{thread}{suffix}")).status_code == 404, (thread, suffix)
    for suffix in (".md", ".bib"):
        assert httpx.get(f"{server}/me/threads/{thread_id}{suffix}").status_code == 404  # signed out
