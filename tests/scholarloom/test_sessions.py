"""Sessions end when we say so (issue 17, item 3): `users disable`, a new password and "sign out everywhere" end
a user's chat, socket and page sessions at their next request; Chainlit's token refresh is closed; the socket
takes no connection from another site (item 4); the chat's pages load images and talk to this site only."""

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import socketio

from auth.accounts import add_user, clear_sign_in_failures, create_tables, set_active
from harness.serve import child_environment, tls
from tests.chat_server import PASSWORD, ChatClient, sign_in

SCHOLARLOOM = str(Path(sys.executable).with_name("scholarloom"))


@pytest.fixture
def frank(server, demo):
    """A user of their own, so ending their sessions disturbs no other test."""
    engine = demo.catalog().engine
    create_tables(engine)
    add_user(engine, "frank", PASSWORD, replace=True)
    set_active(engine, "frank", True)
    yield engine
    set_active(engine, "frank", True)


def _chat_user(server: str, token: str) -> int:
    return httpx.get(f"{server}/chat/user", cookies={"access_token": token}, verify=tls()).status_code


def _page_user(server: str, token: str) -> bool:
    """Whether the pages see the token's user signed in (the following page opens instead of sending to sign-in)."""
    return httpx.get(f"{server}/me/following", cookies={"access_token": token}, verify=tls()).status_code == 200


def test_disabling_a_user_ends_their_chat_socket_and_page_sessions_at_the_next_request(server, frank, demo):
    async def scenario():
        chat = ChatClient(server, "frank")
        await chat.connect()
        token = chat.token
        assert _chat_user(server, token) == 200 and _page_user(server, token)
        set_active(frank, "frank", False)  # what `scholarloom users disable frank` does
        assert _chat_user(server, token) == 401 and not _page_user(server, token)
        # The open socket: the next message is refused (no model is asked) and the socket closed.
        await chat.sio.emit("client_message", _message("frank", "still there?"))
        for _ in range(100):
            if not chat.sio.connected:
                break
            await asyncio.sleep(0.05)
        said = [m["output"] for m in chat.messages("assistant_message")]
        assert not chat.sio.connected and said and "session has ended" in said[-1]
        again = ChatClient(server, "frank")
        again.token = token
        with pytest.raises(socketio.exceptions.ConnectionError):
            await again.connect()
        async with httpx.AsyncClient(base_url=server) as http:  # and no new session either
            login = await http.post("/chat/login", data={"username": "frank", "password": PASSWORD})
        assert login.status_code == 401

    asyncio.run(scenario())


def _state(engine) -> str:
    """What the sign-in saw, for a failure's message."""
    from sqlalchemy import text

    with engine.connect() as connection:
        account = connection.execute(text("SELECT active, session_version FROM accounts WHERE username = 'frank'")).all()
        throttled = connection.execute(text("SELECT key, failures, blocked_until FROM sign_in_failures")).all()
    return f"account {account}, throttle {throttled}"


def _message(user, text):
    from harness.serve import user_message

    return user_message(user, text)


def test_a_new_password_ends_old_sessions_and_a_token_cannot_be_refreshed(server, frank):
    old = asyncio.run(sign_in(server, "frank"))
    assert _chat_user(server, old) == 200
    refresh = httpx.post(f"{server}/chat/auth/jwt", headers={"Authorization": f"Bearer {old}"})
    assert refresh.status_code == 404  # Chainlit's refresh would have turned it into a fresh token
    add_user(frank, "frank", "a brand new password", replace=True)
    assert _chat_user(server, old) == 401 and not _page_user(server, old)
    clear_sign_in_failures(frank)  # other tests' failed sign-ins from this address
    login = httpx.post(f"{server}/chat/login", data={"username": "frank", "password": "a brand new password"})
    assert login.status_code == 200 and _chat_user(server, login.cookies["access_token"]) == 200


def test_sign_out_everywhere_ends_every_session(server, frank):
    first, second = (asyncio.run(sign_in(server, "frank")) for _ in range(2))
    refused = httpx.post(f"{server}/me/sign-out-everywhere", cookies={"access_token": first},
                         headers={"Origin": "https://elsewhere.example"})  # fmt: skip
    assert refused.status_code == 403 and _chat_user(server, first) == 200
    done = httpx.post(f"{server}/me/sign-out-everywhere", cookies={"access_token": first}, headers={"Origin": server})
    assert done.status_code == 303 and done.headers["location"] == "/chat/login"
    assert 'access_token=""' in done.headers["set-cookie"] or "access_token=;" in done.headers["set-cookie"]
    assert _chat_user(server, first) == 401 and _chat_user(server, second) == 401


def test_the_users_commands_disable_enable_and_sign_out(server, frank, demo):
    env = child_environment(demo.data_dir)
    token = asyncio.run(sign_in(server, "frank"))

    def users(*args):
        return subprocess.run([SCHOLARLOOM, "users", *args], env=env, capture_output=True, text=True, timeout=60)

    assert "signed out everywhere" in users("sign-out", "frank").stdout and _chat_user(server, token) == 401
    token = asyncio.run(sign_in(server, "frank"))
    assert "disabled" in users("disable", "frank").stdout and _chat_user(server, token) == 401
    assert httpx.post(f"{server}/chat/login", data={"username": "frank", "password": PASSWORD}).status_code == 401
    assert "may sign in again" in users("enable", "frank").stdout
    assert _chat_user(server, token) == 401  # the sessions that ended stay ended
    clear_sign_in_failures(frank)  # the refused sign-in above (and other tests' from this address) count as failures
    again = httpx.post(f"{server}/chat/login", data={"username": "frank", "password": PASSWORD})
    assert again.status_code == 200, _state(frank)
    missing = users("disable", "nobody-here")
    assert missing.returncode != 0 and "no user 'nobody-here'" in missing.stdout + missing.stderr


def test_the_socket_refuses_connections_from_another_site(server):
    async def scenario():
        foreign = ChatClient(server, "alice")
        foreign.token = await sign_in(server, "alice")
        with pytest.raises(socketio.exceptions.ConnectionError):
            await foreign.sio.connect(server, socketio_path="/chat/ws/socket.io", transports=["websocket"],
                                      headers={"Cookie": f"access_token={foreign.token}",
                                               "Origin": "https://sibling.example.org"},
                                      auth={"clientType": "webapp", "sessionId": foreign.session_id, "threadId": "",
                                            "userEnv": "{}"})  # fmt: skip
        ours = ChatClient(server, "alice")
        ours.token = foreign.token
        await ours.sio.connect(server, socketio_path="/chat/ws/socket.io", transports=["websocket"],
                               headers={"Cookie": f"access_token={ours.token}", "Origin": server},
                               auth={"clientType": "webapp", "sessionId": ours.session_id, "threadId": "",
                                     "userEnv": "{}"})  # fmt: skip
        assert ours.sio.connected
        await ours.sio.disconnect()

    asyncio.run(scenario())


def test_the_chat_pages_may_load_images_and_connect_to_this_site_only(server):
    page = httpx.get(f"{server}/chat/")
    policy = page.headers["content-security-policy"]
    assert "img-src 'self' data: blob:" in policy and "connect-src 'self'" in policy
    assert "frame-ancestors 'self'" in policy  # framed by our own pages' chat dock only
    assert "content-security-policy" in httpx.get(f"{server}/chat/project/settings").headers
    pages = httpx.get(f"{server}/").headers["content-security-policy"]
    assert "frame-ancestors 'none'" in pages and "script-src 'none'" in pages  # the dock needs no script


def test_the_session_cookie_is_secure_when_the_public_address_is_https(server, demo, monkeypatch):
    import functools

    import chainlit.auth.cookie
    import chainlit.auth.jwt

    from auth.accounts import session_is_live
    from chatui import patches

    live = functools.partial(session_is_live, demo.catalog().engine)
    monkeypatch.setattr(chainlit.auth.cookie, "_cookie_secure", False)  # restored after the test
    patches.apply(chainlit.auth.jwt.get_jwt_secret(), live, [server], secure_cookies=True)
    login = httpx.post(f"{server}/chat/login", data={"username": "alice", "password": PASSWORD})
    assert login.status_code == 200 and "secure" in login.headers["set-cookie"].lower()
