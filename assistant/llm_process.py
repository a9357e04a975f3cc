"""The chat's model calls in a process of their own (`SCHOLARLOOM_LLM_PROCESS`, on under `serve`).

litellm and the OpenAI SDK spend 20-30 ms of Python per streamed call (a pydantic object per chunk, the cost and
logging bookkeeping after it). In the server's process all of it holds the GIL that every chat turn, socket write
and search waits on: at 100 chat sessions it was a third of the server's GIL time (BENCHMARKS.md, issue 43). Here
the same `assistant.llm.stream_completion` (with its retries and its failures in words) runs in a child process,
one task per request; each delta, the whole completion or the failure comes back over a pipe. Stopping a turn
cancels its request in the child (the provider's stream is closed there), and a child that dies fails the
requests it held, in words, and is started again for the next one. Until a child has imported litellm (seconds)
requests are made in this process, so neither the first question after a start nor one after a restart waits.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import threading
from collections.abc import AsyncIterator

from assistant.failures import LLMError
from assistant.llm import Completion, LLMConfig, stream_completion
from assistant.provider import litellm_module
from common.logs import REQUEST_ID, configure

log = logging.getLogger(__name__)
GONE = "the language model's worker process stopped; please ask again"
DELTAS_EVERY = 0.04  # seconds between two messages of one request's streamed text (`_Deltas`)


class LLMProcess:
    """Streams completions from a child process. `log_setup` is `common.logs.configure`'s arguments, so the
    child's lines (litellm's among them) read like the server's, secrets hidden, with the turn's request id."""

    def __init__(self, log_setup: tuple[bool, list[str], int] = (False, [], logging.WARNING)) -> None:
        self.log_setup = log_setup
        self._context = multiprocessing.get_context("spawn")  # never a fork of a threaded server
        self._lock = threading.Lock()  # the connection, the process and the waiting requests
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Queue, object]] = {}  # (.., its child's)
        self._process = None
        self._conn = None
        self._ready = threading.Event()  # the live child has litellm imported and takes requests
        self.started = 0  # how many children were started (a test sees a restart)

    def start(self) -> None:
        with self._lock:
            self._ensure()

    def _ensure(self):
        """The live child's connection, starting one if there is none (the lock held)."""
        if self._conn is not None and self._process is not None and self._process.is_alive():
            return self._conn
        ours, theirs = self._context.Pipe(duplex=True)
        process = self._context.Process(target=_child, args=(theirs, self.log_setup), daemon=True,
                                         name="scholarloom-llm")  # fmt: skip
        process.start()
        theirs.close()
        self._process, self._conn = process, ours
        self._ready.clear()
        self.started += 1
        threading.Thread(target=self._read, args=(ours,), daemon=True, name="llm-process-reader").start()
        return ours

    def _read(self, conn) -> None:
        """Hands each message from the child to the request waiting for it; when the child is gone, fails them."""
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "ready":
                self._ready.set()
                continue
            with self._lock:
                waiter = self._waiting.get(message[1])
            if waiter is not None:
                _hand(waiter, message)
        self._orphan(conn)

    def _orphan(self, conn) -> None:
        """The requests sent to this child (gone, or closed) fail in words; if it was the live one, it is no more."""
        with self._lock:
            if self._conn is conn:
                self._conn = None
                self._ready.clear()
            orphans = [n for n, (_, _, sent_to) in self._waiting.items() if sent_to is conn]
            waiters = [self._waiting.pop(n) for n in orphans]
        for waiter in waiters:
            _hand(waiter, ("error", 0, GONE, "unreachable"))

    def wait_ready(self, timeout: float) -> bool:
        """Whether a child takes requests within `timeout` seconds (starting one if there is none)."""
        self.start()
        return self._ready.wait(timeout)

    def _ask(self, number: int, queue: asyncio.Queue, message: tuple) -> None:
        with self._lock:
            conn = self._ensure()
            self._waiting[number] = (asyncio.get_running_loop(), queue, conn)
            conn.send(message)

    def _cancel(self, number: int) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.send(("cancel", number))

    async def stream(
        self, config: LLMConfig, messages: list[dict], tools: list[dict], retrier: None = None, whole: bool = False
    ) -> AsyncIterator[str | Completion]:
        """As `assistant.llm.stream_completion`, with the client's own retry policy (a `Retrier` cannot cross)."""
        if retrier is not None:
            raise ValueError("the model's process retries by the client's own policy; pass no retrier")
        if not self._ready.is_set():  # a child still importing (or none: one is started for the next request)
            self.start()
            async for item in stream_completion(config, messages, tools, whole=whole):
                yield item
            return
        number, queue = next(self._ids), asyncio.Queue()
        finished = False
        try:
            try:
                self._ask(number, queue, ("ask", number, REQUEST_ID.get(), config, messages, tools, whole))
            except (OSError, ValueError) as exc:
                raise LLMError(GONE, "unreachable") from exc
            while True:
                kind, _, *rest = await queue.get()
                if kind == "delta":
                    yield rest[0]
                elif kind == "done":
                    finished = True
                    yield rest[0]
                    return
                else:  # "error": what failed, in words, and which way
                    finished = True
                    raise LLMError(rest[0], rest[1])
        finally:
            with self._lock:
                self._waiting.pop(number, None)
            if not finished:  # the user stopped the turn (or the reader went away): the child ends the request
                try:
                    self._cancel(number)
                except (OSError, ValueError):
                    pass

    def close(self) -> None:
        with self._lock:
            conn, process, self._conn, self._process = self._conn, self._process, None, None
        if conn is not None:
            try:  # (closing our end would not end the child: our reader's blocked read keeps the socket open)
                conn.send(("quit", 0))
            except OSError:
                pass
        if process is not None:
            if not self._ready.is_set():  # still importing, no request of its own: nothing to finish
                process.terminate()
            process.join(5)
            if process.is_alive():
                process.terminate()
                process.join(5)
        if conn is not None:
            self._orphan(conn)  # (a request still waiting at shutdown ends in words too)
            conn.close()


def _hand(waiter: tuple, message: tuple) -> None:
    loop, queue, _ = waiter
    try:
        loop.call_soon_threadsafe(queue.put_nowait, message)
    except RuntimeError:  # its loop has closed (a request abandoned without being closed): nobody to tell
        pass


def _child(conn, log_setup) -> None:  # the child's whole life: requests in, messages out, until the pipe closes
    configure(*log_setup)
    try:
        litellm_module()  # imported before the first request is taken (seconds; meanwhile the server asks in its own)
        conn.send(("ready", 0))
        asyncio.run(_serve(conn))
    except KeyboardInterrupt:  # the server's Ctrl-C reaches its children too
        pass


async def _serve(conn) -> None:
    loop = asyncio.get_running_loop()
    incoming: asyncio.Queue = asyncio.Queue()
    running: dict[int, asyncio.Task] = {}

    def receive() -> None:  # a thread: the pipe's reads block
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                loop.call_soon_threadsafe(incoming.put_nowait, None)
                return
            loop.call_soon_threadsafe(incoming.put_nowait, message)

    threading.Thread(target=receive, daemon=True).start()
    while (message := await incoming.get()) is not None and message[0] != "quit":
        if message[0] == "cancel":
            if (task := running.pop(message[1], None)) is not None:
                task.cancel()
            continue
        _, number, request_id, config, messages, tools, whole = message
        task = asyncio.create_task(_answer(conn, number, request_id, config, messages, tools, whole))
        running[number] = task
        task.add_done_callback(lambda _, n=number: running.pop(n, None))
    for task in running.values():
        task.cancel()


class _Deltas:
    """A request's text deltas on their way over the pipe: the first at once, then at most one message every
    `DELTAS_EVERY` seconds holding all that arrived meanwhile. A provider streams a token or a few a chunk, tens a
    second; each message costs both processes a pickle, a wake-up and, in the server, a socket write to the browser."""

    def __init__(self, conn, number: int) -> None:
        self.conn, self.number, self.loop = conn, number, asyncio.get_running_loop()
        self.pending: list[str] = []
        self.sent_at = float("-inf")
        self.timer: asyncio.TimerHandle | None = None

    def add(self, text: str) -> None:
        self.pending.append(text)
        due = self.sent_at + DELTAS_EVERY
        if self.loop.time() >= due:
            self.flush()
        elif self.timer is None:
            self.timer = self.loop.call_at(due, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.pending:
            self.conn.send(("delta", self.number, "".join(self.pending)))
            self.pending.clear()
            self.sent_at = self.loop.time()


async def _answer(conn, number: int, request_id: str, config, messages, tools, whole: bool = False) -> None:
    REQUEST_ID.set(request_id)  # this task's log lines carry the turn's id, as they did in the server
    deltas = _Deltas(conn, number)
    try:
        async for item in stream_completion(config, messages, tools, whole=whole):
            if isinstance(item, Completion):
                deltas.flush()
                conn.send(("done", number, item))
            else:
                deltas.add(item)
    except LLMError as exc:
        deltas.flush()
        conn.send(("error", number, str(exc), exc.kind))
    except asyncio.CancelledError:
        if deltas.timer is not None:
            deltas.timer.cancel()
        raise
    except Exception as exc:  # noqa: BLE001 - anything else still ends the request, in words
        log.exception("the model's process failed a request")
        deltas.flush()
        conn.send(("error", number, f"the language model's worker failed ({type(exc).__name__})", "stopped"))
