"""The whole app on a real port: pages, Chainlit at /chat, password sign-in, and a chat turn over socket.io."""

import asyncio

import httpx

from assistant.conversation import STOPPED
from harness.llm_server import text, tool_call
from harness.serve import user_message
from tests.chat_server import PASSWORD, ChatClient


def test_pages_and_chat_share_one_app(server):
    health = httpx.get(server + "/healthz").json()
    assert health["status"] == "ok" and health["history_write_failures"] == 0
    ready = httpx.get(server + "/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] and int(ready.json()["catalog"].split()[0]) > 1700
    paper = httpx.get(server + "/papers/2006.07357", follow_redirects=True)
    assert paper.status_code == 200 and "Hindsight Logging for Model Training" in paper.text
    chat = httpx.get(server + "/chat/")
    assert chat.status_code == 200 and '<div id="root">' in chat.text
    logo = httpx.get(server + "/chat/logo", params={"theme": "dark"})
    assert logo.headers["content-type"].startswith("image/svg") and b"ScholarLoom" in logo.content
    config = httpx.get(server + "/chat/auth/config").json()
    assert config["requireLogin"] is True and config["passwordAuth"] is True
    missing = httpx.get(server + "/nowhere")
    assert missing.status_code == 404 and "may not be harvested yet" in missing.text


def test_sign_in_forms_from_another_site_are_refused(server):
    """Login CSRF: a page elsewhere must not sign the victim's browser in as someone else."""
    form = {"username": "alice", "password": PASSWORD}
    foreign = httpx.post(server + "/chat/login", data=form, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403 and "access_token" not in foreign.headers.get("set-cookie", "")
    own = httpx.post(server + "/chat/login", data=form, headers={"Origin": server})
    assert own.status_code == 200 and own.headers["set-cookie"].startswith("access_token=")


def test_password_sign_in(server):
    wrong = httpx.post(server + "/chat/login", data={"username": "alice", "password": "wrong password"})
    unknown = httpx.post(server + "/chat/login", data={"username": "mallory", "password": PASSWORD})
    assert wrong.status_code == unknown.status_code == 401 and wrong.json() == unknown.json()
    right = httpx.post(server + "/chat/login", data={"username": "alice", "password": PASSWORD})
    assert right.status_code == 200
    cookie = right.headers["set-cookie"]
    assert cookie.startswith("access_token=") and "HttpOnly" in cookie
    settings = httpx.get(server + "/chat/project/settings", params={"language": "en-US"}, cookies=right.cookies).json()
    assert settings["markdown"].startswith("# Welcome to ScholarLoom")
    assert [s["label"] for s in settings["starters"]][:2] == ["Logging after training", "Graph convolutions"]


async def test_chat_turn_over_socketio(server, scripted, history):
    scripted.enqueue(
        tool_call("search_papers", query="replay log statements from checkpoints after training"),
        text("Flor replays log statements from checkpoints [1]."),
    )
    chat = ChatClient(server)
    await chat.connect()
    await chat.ask("How do I add logging after training?")
    await chat.sio.disconnect()

    (step,) = chat.messages("tool")
    assert step["name"] == "search_papers" and "Hindsight Logging" in step["output"]
    # Chainlit sends the first piece with stream_start, the rest as stream_token events.
    streamed = "".join(
        d["output"] if e == "stream_start" else d["token"]
        for e, d in chat.events
        if e in ("stream_start", "stream_token")
    )
    assert streamed.startswith("Flor replays log statements")
    final = chat.messages("assistant_message")[-1]["output"]
    assert "[\\[1\\]](/papers/2006.07357-hindsight-logging-for-model-training)" in final and "**Sources**" in final


async def test_chat_about_one_paper(server, scripted, history):
    scripted.enqueue(tool_call("search_papers", query="overhead of checkpointing"), text("About 7% [1]."),
                     text("About 7% [1]."))  # 7 is in nothing it was shown: sent back once, kept, marked
    chat = ChatClient(server)
    await chat.connect(referer=server + "/chat/?paper=2006.07357")
    await chat.ask("What overhead does it have?")
    await chat.sio.disconnect()

    intro = chat.messages("assistant_message")[0]["output"]
    assert intro.startswith("This chat is about **[Hindsight Logging for Model Training]")
    (step,) = chat.messages("tool")
    assert step["output"].splitlines()[1].startswith("\\[1\\] Hindsight Logging for Model Training")
    (checking,) = [s for s in chat.messages("run") if s["name"] == "checking the citations"]
    assert checking["output"].startswith("1 cited sentence was not found in its source: sent back")
    assert "*(not found in [\\[1\\]](/papers/2006.07357" in chat.messages("assistant_message")[-1]["output"]
    assert "id 2006.07357" in scripted.requests[0]["messages"][0]["content"]


async def test_a_chat_opened_from_a_researchers_or_an_institutions_page_is_about_them(server, scripted, demo):
    archive = demo.archive()
    (person,) = [c.researcher for c in archive.find_researchers("Bobby Yan")]
    place = archive.find_institution("Massachusetts Institute of Technology").institution
    scripted.enqueue(text("He works on logging for model training."))
    chat = ChatClient(server)
    await chat.connect(referer=server + f"/chat/?researcher={person.id}")
    await chat.ask("What does he work on?")
    await chat.sio.disconnect()
    intro = chat.messages("assistant_message")[0]["output"]
    assert intro.startswith(f"This chat is about **[Bobby Yan](/researchers/{person.id}-bobby-yan)**")
    assert f"researcher Bobby Yan (researcher id {person.id})" in scripted.requests[0]["messages"][0]["content"]
    for referer, expected in ((f"institution={place.id}", f"**[{place.name}](/institutions/{place.id}-"),
                              ("researcher=999999999", None), ("institution=MIT", None)):  # fmt: skip
        other = ChatClient(server)
        await other.connect(referer=server + f"/chat/?{referer}")
        for _ in range(40):  # the introduction is sent by on_chat_start, shortly after connecting
            if other.messages("assistant_message"):
                break
            await asyncio.sleep(0.05)
        await other.sio.disconnect()
        said = [m["output"] for m in other.messages("assistant_message")]
        assert (said[0].startswith(f"This chat is about {expected}") if expected else not said), (referer, said)


async def test_the_paper_survives_the_sign_in_page_once(server, scripted):
    """/chat?paper=<id> leaves a one-time cookie: after signing in (the query is gone from the address) the first
    chat is about the paper; the next one is not, and opening /chat without a paper forgets it."""
    opened = httpx.get(server + "/chat?paper=2006.07357")
    value = opened.cookies["scholarloom_chat_paper"]
    assert value.endswith(".2006.07357")
    import asyncio

    first = ChatClient(server)
    await first.connect(referer=server + "/chat/", cookie=f"scholarloom_chat_paper={value}")
    for _ in range(100):  # the introduction is sent by on_chat_start, shortly after connecting
        if first.messages("assistant_message"):
            break
        await asyncio.sleep(0.05)
    await first.sio.disconnect()
    assert first.messages("assistant_message")[0]["output"].startswith("This chat is about **[Hindsight Logging")
    again = ChatClient(server)
    await again.connect(referer=server + "/chat/", cookie=f"scholarloom_chat_paper={value}")
    await asyncio.sleep(1.5)
    await again.sio.disconnect()
    assert not again.messages("assistant_message")  # the intent was used once
    cleared = httpx.get(server + "/chat/")
    assert 'scholarloom_chat_paper=""' in cleared.headers["set-cookie"] or "Max-Age=0" in cleared.headers["set-cookie"]


def test_session_lifetime_follows_the_setting(server, tmp_path):
    import time

    import jwt

    from scholarloom.app import prepare_chat_root
    from scholarloom.settings import Settings

    right = httpx.post(server + "/chat/login", data={"username": "alice", "password": PASSWORD})
    claims = jwt.decode(right.cookies["access_token"], options={"verify_signature": False})
    assert abs(claims["exp"] - time.time() - 168 * 3600) < 120  # the default: 7 days
    assert "Max-Age=604800" in right.headers["set-cookie"]
    root = prepare_chat_root(Settings(data_dir=tmp_path, session_hours=2))
    assert "user_session_timeout = 7200" in (root / ".chainlit" / "config.toml").read_text()


def test_a_trusted_proxy_names_the_client(server, demo):
    """Behind a reverse proxy on 127.0.0.1 (the default trusted one), sign-in failures count against the client
    it names in X-Forwarded-For, not against the proxy, so one guesser does not lock everyone out."""
    from auth.accounts import clear_sign_in_failures
    from auth.throttle import Throttle

    throttle = Throttle(demo.catalog().engine)
    for _ in range(6):
        answer = httpx.post(
            server + "/chat/login",
            data={"username": "nobody", "password": "wrong password"},
            headers={"X-Forwarded-For": "203.0.113.77"},
        )
        assert answer.status_code == 401
    try:
        assert throttle.retry_after("addr:203.0.113.77") > 0
        assert throttle.retry_after("addr:127.0.0.1") == 0
        other = {"X-Forwarded-For": "198.51.100.20"}
        right = httpx.post(server + "/chat/login", data={"username": "alice", "password": PASSWORD}, headers=other)
        assert right.status_code == 200
    finally:
        clear_sign_in_failures(demo.catalog().engine)


def address_seen(trusted: str, spoofed: str = "203.0.113.77") -> str:
    """The client address the app sees for a request from 127.0.0.1 that names `spoofed` in X-Forwarded-For, served
    by uvicorn as `scholarloom serve` configures it (`scholarloom.app.server_config`) with `trusted` proxies."""
    import threading
    import time

    import uvicorn

    from harness.serve import free_port
    from scholarloom.app import server_config
    from scholarloom.settings import Settings

    async def echo(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": scope["client"][0].encode()})

    settings = Settings(port=free_port(), forwarded_allow_ips=trusted)
    server = uvicorn.Server(server_config(settings, echo))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(100):
            try:
                url = f"http://127.0.0.1:{settings.port}/"
                return httpx.get(url, headers={"X-Forwarded-For": spoofed}, timeout=2).text
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("the server did not start")
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def test_an_untrusted_client_cannot_choose_its_address():
    """From an address not named in forwarded_allow_ips, X-Forwarded-For is ignored."""
    assert address_seen("192.0.2.1") == "127.0.0.1"  # not from the trusted proxy: the header is ignored
    assert address_seen("127.0.0.1") == "203.0.113.77"
    assert address_seen("*") == "203.0.113.77"  # what the compose file trusted: anyone names their own address


async def test_the_stop_button_ends_the_models_answer_and_keeps_the_thread(server, scripted, history, llm_server):
    """A slow model stopped mid-answer: its request is closed (the provider sees the client hang up), the answer
    keeps what was written, marked as stopped, and the next question's conversation holds both."""
    import chainlit.server

    from auth.usage import tokens_today

    runtime = chainlit.server.app.state.runtime
    registry = runtime.metrics.registry
    counted = lambda: registry.get_sample_value("scholarloom_chat_turns_total",  # noqa: E731
                                                {"mode": "unknown", "outcome": "stopped"}) or 0  # fmt: skip
    assert runtime.usage.flush()  # what earlier turns cost, written
    before, spent = counted(), tokens_today(runtime.engine, "alice")
    slow = "Flor records checkpoints during training and replays them later to run new log statements " * 3
    # (Its [1] is no paper a tool gave, as no tool ran: found nowhere, sent back once, kept and marked.)
    scripted.enqueue(text(slow, pause=0.3), text("It costs little [1]."), text("It costs little [1]."))
    chat = ChatClient(server)
    await chat.connect()
    await chat.wait_for("task_end")  # the chat has started (Chainlit's stop cancels the latest task: let it be ours)
    chat.turn_done.clear()
    await chat.sio.emit("client_message", user_message("alice", "How does Flor add logging after training?"))
    await chat.wait_for("stream_start", timeout=30)
    await asyncio.sleep(0.7)  # a few more words
    await chat.sio.emit("stop")
    await asyncio.wait_for(chat.turn_done.wait(), timeout=30)
    for _ in range(50):  # the stand-in notices on its next write
        if llm_server.hung_up:
            break
        await asyncio.sleep(0.1)
    assert llm_server.hung_up, "the model's request was not closed"
    stopped = chat.messages("assistant_message")[-1]["output"]
    assert stopped.startswith("Flor records checkpoints") and stopped.endswith(STOPPED)
    assert len(stopped) < len(slow)  # only what was written before the stop
    assert counted() == before + 1  # counted as stopped in /metrics
    # What it cost is kept too (the provider reported nothing for the request cut off: estimated, 4 characters a
    # token, from what was sent and what it wrote), so stopping every answer does not get around the daily budget.
    prompt = sum(len(str(m.get("content") or "")) for m in scripted.requests[-1]["messages"]) // 4
    written = len(stopped.removesuffix(STOPPED).rstrip()) // 4  # (a space the stream ended on is not shown)
    assert runtime.usage.flush()  # (written by the usage writer, off the turn's path)
    assert tokens_today(runtime.engine, "alice") - spent - prompt in (written, written + 1) and written >= 6

    await chat.ask("Is it expensive?")
    await chat.sio.disconnect()
    sent = scripted.requests[-2]["messages"]  # the answer's request (the last: the check's request more)
    said = [(m["role"], m.get("content") or "") for m in sent if m["role"] in ("user", "assistant")]
    assert [role for role, _ in said] == ["user", "assistant", "user"]
    assert said[0][1] == "How does Flor add logging after training?" and said[2][1] == "Is it expensive?"
    assert said[1][1].startswith("Flor records checkpoints") and said[1][1].endswith(STOPPED)


async def test_a_turn_never_waits_for_the_databases_write_lock(server, scripted, history, demo):
    """What a turn cost is written off its path (`auth.usage.UsageBook`), and the chat history's statements hold
    SQLite's write lock for the statement alone: with another connection holding the write lock through the whole
    turn, the answer arrives, and the record is written once the lock is free. (The record was an INSERT the turn
    waited for before its answer: under 100 sessions it waited for the history's writers, whose statement and commit
    were two trips through the busy event loop, and the turns behind it waited for a worker thread.)"""
    import sqlite3

    import chainlit.server

    runtime = chainlit.server.app.state.runtime
    assert runtime.usage.flush()
    written = runtime.usage.written
    scripted.enqueue(text("Flor replays log statements [1]."))
    chat = ChatClient(server, "bob")
    await chat.connect()  # (signing in writes: before the lock is taken)
    holder = sqlite3.connect(demo.data_dir / "scholarloom.db", timeout=0, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        chat.turn_done.clear()
        await chat.sio.emit("client_message", user_message("bob", "How does Flor replay log statements?"))
        # Well within the 10 s a writer waits for SQLite's lock: the turn does not wait for it at all.
        await asyncio.wait_for(chat.turn_done.wait(), timeout=8)
        assert chat.messages("assistant_message")[-1]["output"].startswith("Flor replays log statements")
        assert runtime.usage.written == written  # still queued: the database is locked
    finally:
        holder.rollback()
        holder.close()
    assert runtime.usage.flush() and runtime.usage.written == written + 1
    await chat.sio.disconnect()


async def test_each_turn_records_its_tokens_and_a_spent_budget_answers_by_search(server, scripted, history,
                                                                                 monkeypatch):  # fmt: skip
    import chainlit.server

    from auth.usage import tokens_today
    from harness.llm_server import usage_of

    runtime = chainlit.server.app.state.runtime
    assert runtime.usage.flush()
    before = tokens_today(runtime.engine, "bob")
    replies = [tool_call("search_papers", query="replay log statements"), text("Flor replays log statements [1].")]
    scripted.enqueue(*replies)
    chat = ChatClient(server, "bob")
    await chat.connect()
    await chat.ask("How do I add logging after training?")
    reported = sum(sum(usage_of(body, reply)) for body, reply in zip(scripted.requests[-2:], replies))
    assert runtime.usage.tokens_today("bob") - before == reported > 0  # queued or written, it counts at once
    assert runtime.usage.flush()
    assert tokens_today(runtime.engine, "bob") - before == reported  # as the provider reported them
    kept = chat.messages("assistant_message")[-1]["metadata"]["usage"]  # and with the turn's own step
    assert kept["prompt_tokens"] + kept["completion_tokens"] == reported and kept["requests"] == 2

    monkeypatch.setattr(runtime.settings, "llm_daily_tokens", before + reported)  # now spent
    asked = len(scripted.requests)
    await chat.ask("And what about checkpoints?")
    await chat.sio.disconnect()
    answer = chat.messages("assistant_message")[-1]["output"]
    assert answer.startswith("**Today's language-model budget is spent**") and "retrieval-only" in answer
    assert len(scripted.requests) == asked  # the model was not asked


def _metrics(text: str) -> dict[tuple, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


async def test_metrics_count_a_chat_turn_for_admins_only(server, scripted, history):
    import chainlit.server

    from auth.accounts import set_admin
    from tests.chat_server import sign_in

    engine = chainlit.server.app.state.runtime.engine
    assert httpx.get(server + "/metrics").status_code == 404  # signed out
    alice = {"access_token": await sign_in(server, "alice")}
    assert httpx.get(server + "/metrics", cookies=alice).status_code == 404  # not an admin
    set_admin(engine, "bob", True)
    try:
        bob = {"access_token": await sign_in(server, "bob")}
        before = _metrics(httpx.get(server + "/metrics", cookies=bob).text)
        scripted.enqueue(tool_call("search_papers", query="replay log statements from checkpoints after training"),
                         text("Flor replays log statements from checkpoints [1]."))  # found: no request more
        chat = ChatClient(server, "bob")
        await chat.connect()
        await chat.ask("How do I add logging after training?")
        await chat.sio.disconnect()
        refused = httpx.post(server + "/chat/login", data={"username": "bob", "password": "not the password"})
        assert refused.status_code == 401
        page = httpx.get(server + "/metrics", cookies=bob)
    finally:
        set_admin(engine, "bob", False)
    assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
    after = _metrics(page.text)

    def moved(name: str, **labels) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    assert moved("scholarloom_chat_turns_total", mode="agent", outcome="answered") == 1
    assert moved("scholarloom_tool_seconds_count", tool="search_papers") == 1
    assert moved("scholarloom_llm_request_seconds_count") == 2
    assert moved("scholarloom_http_requests_total", route="/metrics", status="200") == 1
    assert after[("scholarloom_index_points", (("kind", "abstract"),))] > 1700
    assert moved("scholarloom_sign_in_failures_total") == 1


async def test_the_model_cites_a_page_of_the_users_own_upload(server, scripted, demo):
    """Upload -> ask -> the written answer's [1, p. N] links to the upload's private page (the scripted model asks
    for the full text, then cites what the tool numbered); another user's same question gets no such source."""
    from auth.accounts import add_user
    from ingest.pdf_worker import PdfLimits
    from ingest.report import Summary
    from ingest.writer import Writer
    from jobs.kinds import index_upload
    from tests.conftest import PDFS

    add_user(demo.catalog().engine, "hana", PASSWORD, replace=True)
    chat = ChatClient(server, "hana")
    await chat.connect()
    async with chat.http() as http:
        pdf = {"file": ("longeval.pdf", (PDFS / "2023.eacl-main.121.pdf").read_bytes(), "application/pdf")}
        item = (await http.post("/api/library", files=pdf)).json()
    uploads = demo.uploads()
    try:  # this test server runs no job worker: the upload's job is run here, on the server's own stores
        await asyncio.to_thread(index_upload, Writer.of(demo.archive()), uploads, item["id"], PdfLimits(), Summary())
        question = "How should human evaluation of faithfulness in long-form summaries be done?"
        for who in ("hana", "alice"):
            scripted.enqueue(tool_call("search_fulltext", query="guidelines for human evaluation of faithfulness"),
                             text("Annotate fine-grained units, not whole summaries [1, p. 3]."))  # fmt: skip
            if who == "alice":  # her [1] is another paper, which does not say it: sent back once, kept, marked
                scripted.enqueue(text("Annotate fine-grained units, not whole summaries [1, p. 3]."))
            asking = chat if who == "hana" else ChatClient(server, "alice")
            if who == "alice":
                await asking.connect()
            await asking.ask(question)
            step = asking.messages("tool")[-1]["output"]
            final = asking.messages("assistant_message")[-1]["output"]
            if who == "hana":
                assert f"/me/library/{item['id']}" in step and "p. " in step  # the tool numbered her upload
                assert f"[\\[1, p. 3\\]](/me/library/{item['id']}). ✓" in final, final  # found on her page 3
            else:
                assert "/me/library/" not in step + final and "LongEval" not in step, step
                assert "*(not found in [\\[1\\]](/papers/" in final, final
            await asking.sio.disconnect()
    finally:  # the demo's data directory is shared by the run: leave no upload and no queued job behind
        from jobs.queue import JobQueue

        JobQueue(demo.catalog().engine).cancel(item["job"])
        upload = uploads.get("hana", item["id"])
        if upload is not None:
            uploads.delete(upload, demo.index())


async def _until(found, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.05)):
        if found():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not seen in time")


async def test_a_busy_chat_queues_a_question_and_refuses_one_in_words(server, scripted, history):
    """One turn at once and a line of one (`chatui.busy`): alice's question runs; bob's waits with its place shown
    in the chat, the notice gone once his turn comes, and is answered; a third, from alice's other tab, finds the
    line full and is told so in words with a time to try again, without reaching the model."""
    import re

    import chainlit.server

    from common.admission import Admission, Limits

    runtime = chainlit.server.app.state.runtime
    usual = runtime.chat_turns
    runtime.chat_turns = Admission("chat", Limits(at_once=1, per_user=1, queue=1, queue_per_user=1, wait_seconds=30),
                                   noun="question")
    small = runtime.chat_turns
    runtime.metrics.watch(small)
    # Alice's answer takes about 3.5 s (seven words 0.5 s apart): the others ask meanwhile.
    scripted.enqueue(text("Hindsight logging replays the training run later.", pause=0.5), text("Bob's answer."))
    first, second, other_tab = ChatClient(server), ChatClient(server, "bob"), ChatClient(server)
    try:
        for chat in (first, second, other_tab):
            await chat.connect()
        asking = asyncio.create_task(first.ask("What is hindsight logging?"))
        await _until(lambda: scripted.requests)
        waiting = asyncio.create_task(second.ask("And flor?"))
        queued = lambda: [m for m in second.messages("assistant_message") if "queued" in m["output"]]  # noqa: E731
        await _until(queued)
        (notice,) = queued()
        assert notice["output"].startswith("The server is busy: your question is queued (you are next).")
        await other_tab.ask("Anything else?")
        await asking
        await waiting
        refused_metric = runtime.metrics.registry.get_sample_value(
            "scholarloom_admission_refused_total", {"kind": "chat", "reason": "queue_full"})
    finally:
        runtime.chat_turns = usual
        runtime.metrics.watch(usual)
        for chat in (first, second, other_tab):
            await chat.sio.disconnect()
    (refusal,) = [m["output"] for m in other_tab.messages("assistant_message")]
    assert re.fullmatch(r"The server is busy: every turn is taken and 1 question is already waiting\. "
                        r"Try again in \d+ s\.", refusal), refusal  # fmt: skip
    assert first.messages("assistant_message")[-1]["output"].startswith("Hindsight logging replays")
    assert second.messages("assistant_message")[-1]["output"].startswith("Bob's answer")
    assert notice["id"] in [d["id"] for d in second.event("delete_message")]  # the notice went when his turn came
    assert len(scripted.requests) == 2  # the refused question never reached the model
    assert (small.snapshot().admitted, small.snapshot().refused["queue_full"]) == (2, 1)
    assert refused_metric == 1  # in /metrics


async def test_a_sign_in_storm_past_the_line_is_refused_in_words(server):
    """Sign-ins one at a time and no line: of three at once, at least one is refused with 503, its reason in words
    and a Retry-After, and the sign-in form has words for it; the line's turn is not lost (the next one signs in)."""
    import chainlit.server

    from common.admission import Admission, Limits

    runtime = chainlit.server.app.state.runtime
    usual = runtime.sign_ins
    runtime.sign_ins = Admission("sign_in", Limits(at_once=1, per_user=1, queue=0, queue_per_user=0, wait_seconds=5))
    try:
        async with httpx.AsyncClient(base_url=server) as http:
            logins = await asyncio.gather(*(http.post("/chat/login", data={"username": user, "password": PASSWORD})
                                            for user in ("alice", "bob", "alice")))  # fmt: skip
            statuses = sorted(r.status_code for r in logins)
            refused = [r for r in logins if r.status_code == 503]
            await _until(lambda: runtime.sign_ins.snapshot().running == 0)  # (let go once the route has finished)
            again = await http.post("/chat/login", data={"username": "bob", "password": PASSWORD})
            words = (await http.get("/chat/project/translations", params={"language": "en-US"})).json()
    finally:
        runtime.sign_ins = usual
    assert statuses[0] == 200 and statuses[-1] == 503 and again.status_code == 200, statuses
    assert refused[0].json()["detail"].startswith("The server is busy: every turn is taken.")
    assert int(refused[0].headers["retry-after"]) >= 1
    said = words["translation"]["auth"]["login"]["errors"]["service unavailable"]
    assert said.startswith("The server is busy signing others in.")
