"""A signed-in Chainlit session over socket.io, as a browser holds one: what the chat's tests and `bench.load` drive
the served app with."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import socketio

from harness.serve import tls, user_message

PASSWORD = "correct horse battery"
USERS = ("alice", "bob")


async def sign_in(server: str, user: str = "alice") -> str:
    async with httpx.AsyncClient(base_url=server, verify=tls()) as http:
        login = await http.post("/chat/login", data={"username": user, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return login.cookies["access_token"]


class ChatClient:
    """A signed-in Chainlit session over socket.io, recording every event the browser would receive."""

    def __init__(self, server: str, user: str = "alice") -> None:
        self.server = server
        self.user = user
        self.session_id = str(uuid.uuid4())
        self.token = ""
        self.events: list[tuple[str, object]] = []
        self.turn_done = asyncio.Event()
        self.sio = socketio.AsyncClient()

        @self.sio.on("*")
        async def record(event, data):
            self.events.append((event, data))
            if event == "update_message" and data.get("name") == "on_message":  # the turn's run step ended
                self.turn_done.set()

    async def connect(self, referer: str | None = None, cookie: str = "", thread_id: str = "") -> None:
        self.token = self.token or await sign_in(self.server, self.user)
        headers = {"Cookie": f"access_token={self.token}" + (f"; {cookie}" if cookie else "")}
        if referer:
            headers["Referer"] = referer
        await self.sio.connect(
            self.server,
            socketio_path="/chat/ws/socket.io",
            headers=headers,
            auth={"clientType": "webapp", "sessionId": self.session_id, "threadId": thread_id, "userEnv": "{}"},
            transports=["websocket"],
        )
        await self.sio.emit("connection_successful")

    async def ask(self, question: str) -> None:
        self.turn_done.clear()
        await self.sio.emit("client_message", user_message(self.user, question))
        await asyncio.wait_for(self.turn_done.wait(), timeout=60)

    async def attach(self, name: str, data: bytes, mime: str = "application/pdf") -> httpx.Response:
        """What the attach button does: the file to Chainlit's upload route for this session (its id in the JSON)."""
        async with self.http() as http:
            return await http.post("/chat/project/file", params={"session_id": self.session_id},
                                   files={"file": (name, data, mime)})  # fmt: skip

    def messages(self, kind: str) -> list[dict]:
        """The last state of each message of a type (assistant_message, tool...), in order of creation."""
        latest: dict[str, dict] = {}
        for event, data in self.events:
            if event in ("new_message", "update_message") and data.get("type") == kind:
                latest[data["id"]] = data
        return list(latest.values())

    def event(self, name: str) -> list:
        return [data for event, data in self.events if event == name]

    async def wait_for(self, name: str, timeout: float = 10) -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if found := self.event(name):
                return found[-1]
            await asyncio.sleep(0.05)
        raise AssertionError(f"no {name} event within {timeout} s")

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.server, cookies={"access_token": self.token}, verify=tls())
