"""A scripted OpenAI-compatible chat server on 127.0.0.1 that litellm talks to over real HTTP.

Each request takes the next scripted reply: text, or tool calls. With stream=true it answers with
server-sent events the way OpenAI does (the id and name only in a call's first delta, arguments in pieces).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def text(content: str, pause: float = 0.0, words: int = 1, over: float = 0.0) -> dict:
    """A written reply; streamed `words` words a chunk, `pause` seconds apart (to watch streaming happen), or
    spread evenly over `over` seconds (a model writing at a steady rate: the server's `latency` then counts them)."""
    return {"content": content, "pause": pause, "words": max(1, words), "over": over}


def failure(status: int, retry_after: str | None = None, message: str = "scripted", code: str | None = None) -> dict:
    """An error reply (401, 404, 400, 429, 500, 503...) with OpenAI's error body (message, type, code), and a
    Retry-After header if given."""
    return {"status": status, "retry_after": retry_after, "message": message, "code": code}


def tool_call(tool: str, /, **arguments) -> dict:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def raw_tool_call(tool: str, arguments: str) -> dict:
    """A tool call whose arguments are sent exactly as given (a small model's broken or Python-style JSON)."""
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # (5 by default: a load test's bursts of connections would wait for SYN retries)


class ScriptedLLM:
    """`responder` (optional) answers each request from its body instead of the queue of scripted replies, and
    `latency` seconds pass before every answer: a provider's think time, for load tests."""

    def __init__(self, responder=None, latency: float = 0.0) -> None:
        self.responder = responder
        self.latency = latency
        self.replies: deque[dict] = deque()
        self.requests: list[dict] = []
        self.probes: list[dict] = []  # a server's probe of its model (`assistant.probe`), answered apart
        self.answer_probes = False  # on while a served instance (which probes its model at start) uses this one
        self.arrivals: list[float] = []  # when each request came in (monotonic seconds)
        self.hung_up: list[float] = []  # when a client closed a streamed answer before its end
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def enqueue(self, *replies: dict) -> None:
        self.replies.extend(replies)

    def start(self) -> "ScriptedLLM":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                self._body = body
                if outer.answer_probes and (probed := _probe_reply(body)) is not None:  # apart from the script
                    outer.probes.append(body)
                    if body.get("stream"):
                        return self._stream(probed, body.get("model", "scripted"))
                    return self._send_json(200, _completion(probed, body.get("model", "scripted"), body))
                outer.requests.append(body)
                outer.arrivals.append(time.monotonic())
                if not self.path.endswith("/chat/completions"):
                    return self._send_json(404, {"error": {"message": "not found"}})
                if outer.responder is not None:
                    reply = outer.responder(body)
                elif not outer.replies:
                    return self._send_json(500, {"error": {"message": "script exhausted", "type": "server_error"}})
                else:
                    reply = outer.replies.popleft()
                if outer.latency:  # the think time before the first token; a paced stream spends the rest
                    time.sleep(max(0.0, outer.latency - reply.get("over", 0.0)))
                if "status" in reply:
                    extra = {"retry-after": reply["retry_after"]} if reply["retry_after"] else {}
                    kind = {429: "rate_limit_exceeded", 401: "invalid_request_error", 404: "invalid_request_error",
                            400: "invalid_request_error"}.get(reply["status"], "server_error")  # fmt: skip
                    body = {"message": reply.get("message", "scripted"), "type": kind, "code": reply.get("code")}
                    return self._send_json(reply["status"], {"error": body}, extra)
                if body.get("stream"):
                    return self._stream(reply, body.get("model", "scripted"))
                time.sleep(reply.get("over", 0.0))  # an answer asked for whole takes as long to write
                return self._send_json(200, _completion(reply, body.get("model", "scripted"), body))

            def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: dict, model: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    chunks = list(_chunks(reply, model))
                    pause = reply.get("pause", 0.0) + reply.get("over", 0.0) / len(chunks)
                    for chunk in chunks:
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(pause)
                    if (self._body.get("stream_options") or {}).get("include_usage"):  # as OpenAI: a last chunk
                        self.wfile.write(f"data: {json.dumps(_usage_chunk(self._body, reply, model))}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client went away mid-answer (a stop)
                    outer.hung_up.append(time.monotonic())

        return Handler


def _probe_reply(body: dict) -> dict | None:
    """A served instance asks its model what it can do when it starts; the stand-in answers as a capable model."""
    from assistant.probe import CALL, COUNT, READY

    messages = body.get("messages") or [{}]
    asked = messages[-1].get("content") if len(messages) == 1 else None
    return {READY: text("ready"), COUNT: text("1 2 3 4 5"), CALL: tool_call("echo", word="ping")}.get(asked)


def usage_of(body: dict, reply: dict) -> tuple[int, int]:
    """The tokens the stand-in reports: a word per token, of what was sent and of the reply."""
    sent = sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])
    return sent, len(str(reply.get("content") or "").split()) + 5 * len(reply.get("tool_calls") or [])


def _usage_chunk(body: dict, reply: dict, model: str) -> dict:
    prompt, written = usage_of(body, reply)
    usage = {"prompt_tokens": prompt, "completion_tokens": written, "total_tokens": prompt + written}
    return {**_envelope(model, {}), "choices": [], "usage": usage}


def _envelope(model: str, delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _chunks(reply: dict, model: str):
    if "tool_calls" in reply:
        for i, call in enumerate(reply["tool_calls"]):
            args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
            first = {"index": i, "id": f"call_{i}_{call['name']}", "type": "function",
                     "function": {"name": call["name"], "arguments": ""}}  # fmt: skip
            yield _envelope(model, {"role": "assistant", "content": None, "tool_calls": [first]})
            half = len(args) // 2
            for piece in (args[:half], args[half:]):
                yield _envelope(model, {"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        yield _envelope(model, {}, "tool_calls")
        return
    words, size = reply["content"].split(" "), reply.get("words", 1)
    yield _envelope(model, {"role": "assistant", "content": ""})
    for n in range(0, len(words), size):
        piece = " ".join(words[n : n + size])
        yield _envelope(model, {"content": piece + (" " if n + size < len(words) else "")})
    yield _envelope(model, {}, "stop")


def _completion(reply: dict, model: str, body: dict) -> dict:
    message: dict = {"role": "assistant", "content": reply.get("content")}
    if "tool_calls" in reply:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str)
                             else json.dumps(c["arguments"])},
            }
            for i, c in enumerate(reply["tool_calls"])
        ]
    finish = "tool_calls" if "tool_calls" in reply else "stop"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": dict(zip(("prompt_tokens", "completion_tokens"), usage_of(body, reply), strict=True),
                      total_tokens=sum(usage_of(body, reply))),
    }
