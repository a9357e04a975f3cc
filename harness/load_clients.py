"""The readers of a load test (`bench.load`): signed-in chat sessions over socket.io, run in a process of their own
(`run_sessions`: `bench.load` starts several), each arriving at its own moment of the ramp, signing in, connecting
and asking its questions; and a sign-in storm (`run_sign_ins`). What each process reports: its turns, its errors by
kind, what its answers showed (cards, citations, streamed chunks, tool steps), its own CPU and its event loop's
worst lag (a client process that lags is the bottleneck, not the server)."""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, replace

import httpx
import socketio

from harness.serve import tls, user_message

PASSWORD = "load test password"
TOPICS = ["graph neural networks", "logging after training", "diphoton production", "point clouds", "transformers"]
START_MARGIN = 1.0  # seconds between the client processes' start and the level's
LINKED = re.compile(r"\[\[(\d+)")  # a citation the chat linked: [[n]](/papers/...)
BUSY = "The server is busy:"  # how the chat's notices of a busy server begin (`chatui.busy`)
SIGN_IN_TRIES = 5  # a reader told the server is busy signs in again after the time it was given, a few times


@dataclass(frozen=True)
class Plan:
    """What one client process runs: its users, from `start_at` (wall-clock seconds, shared by all processes)."""

    base: str
    users: list[str]
    start_at: float
    turns: int = 2
    ramp: float = 5.0
    think: float = 2.0
    timeout: float = 120.0
    seed: int = 0
    connect: bool = True  # the sign-in storm: open the chat after signing in (as a browser does)


def kind_of(stage: str, exc: BaseException) -> str:
    """An error's kind, as the report counts them: the stage and what failed ("sign-in: HTTP 503")."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"{stage}: HTTP {exc.response.status_code}"
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return f"{stage}: timeout"
    return f"{stage}: {type(exc).__name__}"


class Session:
    def __init__(self, base: str, user: str, seed: int = 0) -> None:
        self.base, self.user = base, user
        self.rng = random.Random(f"{seed}:{user}")  # its start, topics and pauses: the same in every run
        self.arrives = self.rng.random()  # its moment in the ramp, as a share of it
        self.token = uuid.uuid4().hex[:12]
        self.sio = socketio.AsyncClient(reconnection=False)
        self.done = asyncio.Event()
        self.answers: list[str] = []
        self.shown: list[dict] = []  # what each turn showed
        self.foreign = 0
        self.seen: Counter[str] = Counter()  # this turn's cards, streamed chunks and tool steps
        self.stage = "sign-in"
        self.refused_sign_ins = 0  # sign-ins answered "busy, try again in N s" (503), tried again
        self.sio.on("*", self._record)

    async def _record(self, event, data) -> None:
        if not isinstance(data, dict):
            return
        if event == "stream_token":
            self.seen["chunks"] += 1
        elif event == "element" and data.get("name") == "ScholarCard":
            self.seen["cards"] += 1
        elif event in ("new_message", "update_message"):
            said = str(data.get("output", "")).replace("\\[", "[").replace("\\]", "]")  # the chat escapes brackets
            if data.get("type") == "assistant_message" and said.startswith("Answer for ["):
                self.answers.append(said)
            elif data.get("type") == "assistant_message" and said.startswith(BUSY) and event == "new_message":
                self.seen["queued" if "is queued" in said else "refused"] += 1  # waited in line; or told to retry
            if data.get("type") == "tool" and event == "new_message":
                self.seen["tools"] += 1
            if data.get("type") == "user_message" and self.token not in data.get("output", self.token):
                self.foreign += 1
            if event == "update_message" and data.get("name") == "on_message":
                self.done.set()

    async def sign_in(self) -> str:
        self.stage = "sign-in"
        async with httpx.AsyncClient(base_url=self.base, timeout=60, verify=tls()) as http:  # (as the chat's tests)
            for _ in range(SIGN_IN_TRIES):
                login = await http.post("/chat/login", data={"username": self.user, "password": PASSWORD})
                if login.status_code != 503 or self.refused_sign_ins == SIGN_IN_TRIES - 1:
                    break
                self.refused_sign_ins += 1
                await asyncio.sleep(float(login.headers.get("retry-after", "1")))
            login.raise_for_status()
        return login.cookies["access_token"]

    async def connect(self, cookie: str) -> None:
        self.stage = "connect"
        await self.sio.connect(
            self.base,
            socketio_path="/chat/ws/socket.io",
            headers={"Cookie": f"access_token={cookie}"},
            auth={"clientType": "webapp", "sessionId": str(uuid.uuid4()), "threadId": "", "userEnv": "{}"},
            transports=["websocket"],
            wait_timeout=30,
        )
        await self.sio.emit("connection_successful")

    async def turn(self, number: int, timeout: float) -> tuple[float, dict]:
        """The turn's seconds, and what it showed: cards, chunks, tool steps and the citations its answer linked."""
        self.stage, self.seen = "turn", Counter()
        self.done.clear()
        answered = len(self.answers)
        question = f"[{self.token}] {self.rng.choice(TOPICS)} (turn {number})"
        start = time.perf_counter()
        await self.sio.emit("client_message", user_message(self.user, question))
        await asyncio.wait_for(self.done.wait(), timeout=timeout)
        seconds = time.perf_counter() - start
        final = self.answers[-1] if len(self.answers) > answered else ""
        return seconds, {**self.seen, "citations": len(set(LINKED.findall(final)))}


async def _lag_watch(worst: list[float], every: float = 0.1) -> None:
    """How late this process's event loop wakes (its worst, in `worst[0]`): a busy client process shows here."""
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(every)
        worst[0] = max(worst[0], time.perf_counter() - asked - every)


async def _chat(plan: Plan, session: Session, found: dict) -> None:
    """One reader: arrives, signs in, connects, asks `plan.turns` questions with pauses between them."""
    await asyncio.sleep(max(0.0, plan.start_at + session.arrives * plan.ramp - time.time()))
    connected = began = time.time() - plan.start_at
    try:
        cookie = await session.sign_in()
        found["sign_in"].append(time.time() - plan.start_at - began)
        await session.connect(cookie)
        connected = time.time() - plan.start_at
        found["connect"].append(connected - began - found["sign_in"][-1])
        for number in range(plan.turns):
            began = time.time() - plan.start_at
            seconds, shown = await session.turn(number, plan.timeout)
            found["turns"].append((round(began, 2), round(seconds, 3), session.user))
            found["shown"].append(shown)
            session.shown.append(shown)
            await asyncio.sleep(session.rng.uniform(0.5, 1.5) * plan.think)
    except Exception as exc:  # noqa: BLE001 - every failure is counted and named
        found["errors"].append((kind_of(session.stage, exc), f"{session.user}: {str(exc)[:120]}"))
    finally:
        if session.sio.connected:
            found["spans"].append((connected, time.time() - plan.start_at))  # (connected, left)
            await session.sio.disconnect()
    wrong = [a for a in session.answers if f"[{session.token}]" not in a]
    found["crosstalk"] += len(wrong) + session.foreign
    found["refused_sign_ins"] += session.refused_sign_ins
    done = sum(1 for _, _, user in found["turns"] if user == session.user)
    refused = sum(shown.get("refused", 0) for shown in session.shown)
    if done == plan.turns and len(session.answers) + refused < plan.turns:
        found["errors"].append(("turn: no answer", f"{session.user}: {len(session.answers)} for {plan.turns}"))


async def _sign_in_once(plan: Plan, session: Session, found: dict) -> None:
    """One reader of the storm: signs in at its moment (timed), then opens the chat (timed apart) and leaves."""
    await asyncio.sleep(max(0.0, plan.start_at + session.arrives * plan.ramp - time.time()))
    try:
        began = time.perf_counter()
        cookie = await session.sign_in()
        found["sign_in"].append(time.perf_counter() - began)
        if plan.connect:
            began = time.perf_counter()
            await session.connect(cookie)
            found["connect"].append(time.perf_counter() - began)
    except Exception as exc:  # noqa: BLE001
        found["errors"].append((kind_of(session.stage, exc), f"{session.user}: {str(exc)[:120]}"))
    finally:
        found["refused_sign_ins"] += session.refused_sign_ins
        if session.sio.connected:
            await session.sio.disconnect()


async def _run(plan: Plan, each) -> dict:
    found = {"turns": [], "shown": [], "errors": [], "crosstalk": 0, "sign_in": [], "connect": [], "spans": [],
             "refused_sign_ins": 0}
    worst = [0.0]
    watch = asyncio.create_task(_lag_watch(worst))
    await asyncio.gather(*(each(plan, Session(plan.base, u, plan.seed), found) for u in plan.users))
    watch.cancel()
    return {**found, "lag_max_s": round(worst[0], 3)}


def _measured(plan: Plan, each) -> dict:
    cpu, wall = time.process_time(), time.time()
    found = asyncio.run(_run(plan, each))
    busy = max(0.0, time.time() - max(wall, plan.start_at))
    return {**found, "cpu_s": time.process_time() - cpu, "busy_s": busy}


def run_sessions(plan: Plan) -> dict:
    """The chat sessions of one client process (its own CPU seconds in `cpu_s`)."""
    return _measured(plan, _chat)


def run_sign_ins(plan: Plan) -> dict:
    """The sign-ins of one client process in a storm."""
    return _measured(plan, _sign_in_once)


def peak(spans: list[tuple[float, float]]) -> int:
    """The most sessions connected at once, from their (connected, left) times."""
    moments = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    most = now = 0
    for _, step in moments:
        now += step
        most = max(most, now)
    return most


def pick(ordered: list[float], q: float) -> float | None:
    """The q-quantile of a sorted list (the nearest rank below), rounded to ms; None for an empty one."""
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if ordered else None


def in_processes(runner, plan: Plan, processes: int) -> tuple[list[dict], float, float]:
    """`runner` on `plan`'s users split over `processes` client processes, all starting the level at one moment:
    their results, and when the level began and ended (monotonic seconds)."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        pool.map(time.sleep, [0.2] * processes, chunksize=1)  # the processes started (spawn imports the modules)
        start_at = time.time() + START_MARGIN
        began = time.monotonic() + START_MARGIN
        plans = [replace(plan, users=plan.users[n::processes], start_at=start_at) for n in range(processes)]
        results = pool.map(runner, plans, chunksize=1)
    return results, began, time.monotonic()


def client_figures(results: list[dict], own_cpu: float, count: int, per: str = "turn") -> dict:
    """The client side's figures: its CPU per turn (or per sign-in), how busy its busiest process was on average
    over the level and its worst event-loop lag (a client process that lags is the bottleneck), its errors."""
    cpu = sum(r["cpu_s"] for r in results) + own_cpu
    errors = [e for r in results for e in r["errors"]]
    return {
        "client_processes": len(results),
        f"client_cpu_ms_per_{per}": round(1000 * cpu / max(1, count)),
        "client_busiest_core": round(max(r["cpu_s"] / max(r["busy_s"], 1e-9) for r in results), 2),
        "client_lag_max_s": max(r["lag_max_s"] for r in results),
        "errors": len(errors),
        "errors_by_kind": dict(Counter(kind for kind, _ in errors).most_common()),
        "first_errors": [said for _, said in errors[:3]],
    }
