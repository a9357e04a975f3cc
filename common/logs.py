"""The server's logs: text or JSON lines (SCHOLARLOOM_LOG_FORMAT=json), each with the request id of what it was
doing (an HTTP request's, or a chat turn's, which its tools and LLM calls carry too), and never a secret: the
configured ones (session secret, API keys, tokens) are replaced wherever they appear, and so is anything shaped like
a key, a bearer token, a JWT or a `password=` value."""

from __future__ import annotations

import json
import logging
import re
import uuid
from contextvars import ContextVar
from datetime import datetime, timezone

REQUEST_ID: ContextVar[str] = ContextVar("scholarloom_request_id", default="-")
HIDDEN = "[hidden]"
_SHAPES = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-" + HIDDEN),
    (re.compile(r"\bsl_[A-Za-z0-9_\-]{20,}"), "sl_" + HIDDEN),  # an API token; its prefix stays
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}"), "Bearer " + HIDDEN),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}"), HIDDEN),  # a JWT
    (re.compile(r"(?i)\b(password|passwd|secret|api[_-]?key|access_token|token|key)(\"?\s*[:=]\s*\"?)([^\s\"'&,;)]+)"),
     r"\1\2" + HIDDEN),  # fmt: skip
)
_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def new_request_id(given: str | None = None) -> str:
    """A caller's X-Request-ID when it is a plain token, else a fresh one."""
    return given if given and _ID.match(given) else uuid.uuid4().hex[:16]


class Redact(logging.Filter):
    """Replaces the configured secrets and anything shaped like one in each record's message and trace."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets or [] if s and len(s) >= 6}, key=len, reverse=True)

    def clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, HIDDEN)
        for shape, replacement in _SHAPES:
            text = shape.sub(replacement, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self.clean(record.getMessage()), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.clean(record.exc_text)
        record.request_id = REQUEST_ID.get()
        return True


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "at": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", REQUEST_ID.get()),
            "message": record.getMessage(),
        }
        if record.exc_text:
            entry["error"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


def configure(json_lines: bool, secrets: list[str], level: int = logging.WARNING) -> logging.Handler:
    """One handler on the root logger (stderr), redacting, at `level`; uvicorn's and every library's loggers
    reach it."""
    handler = logging.StreamHandler()
    handler.addFilter(Redact(secrets))
    handler.setFormatter(JsonLines() if json_lines else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"))  # fmt: skip
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # a library's warnings too are log lines (py.warnings), not raw stderr
    return handler


class RequestIds:
    """ASGI middleware: each HTTP request runs with its id (the caller's X-Request-ID, or a new one), which its log
    lines carry and its answer repeats."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        request_id = new_request_id(given)
        token = REQUEST_ID.set(request_id)

        async def sending(message):
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            REQUEST_ID.reset(token)
