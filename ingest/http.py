"""Outbound HTTP for the harvesters: polite, bounded and limited to the hosts we were told about.

Every request goes through `PoliteClient`:
- only `http(s)` URLs whose host is on the allow-list (arxiv.org and the configured API hosts); each redirect
  hop is checked again, and followed by us, not by httpx; a redirect from https to http is refused, and one to
  another host loses the caller's headers (the Semantic Scholar key travels in one);
- the host's addresses are resolved first and refused when any is loopback, private, link-local, multicast,
  reserved or unspecified, also inside an IPv4-mapped, 6to4, Teredo or NAT64 address (so `127.0.0.1`,
  `[::ffff:127.0.0.1]`, `0x7f000001`, `2002:7f00:1::` and a name that resolves there all fail), unless that
  exact `host:port` was explicitly configured as a private mirror; the connection then goes to the address that
  was checked (it is never resolved a second time, so a DNS answer that changes in between cannot redirect it);
- one connection, and at least `interval` seconds between two requests to one host (arXiv asks for 3 s);
- a descriptive User-Agent; connect/read timeouts;
- 429 and 5xx answers and transport errors are retried with exponential back-off and jitter, honouring
  `Retry-After` (seconds or an HTTP date) up to `max_wait`;
- the body is read in chunks and refused past `max_bytes` (or past a smaller cap the request gives: a caller's
  budget of bytes stops the download as soon as it is spent, not after).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

import httpx

from common.retry import GaveUp, Retrier
from ingest.addresses import address_is_public, default_resolve, pinned_transport
from retrieval.scholarly.records import whole_number

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5


class FetchError(Exception):
    """A request that could not be made or did not succeed; the message says why, for the user."""

    def __init__(self, message: str, status: int | None = None, body: bytes = b"") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class FetchRefused(FetchError):
    """A URL we will not fetch (host not allowed, private address, bad scheme)."""


class FetchTooLarge(FetchError):
    """An answer longer than the cap (the service's, or the one the request was given): `limit` is that cap."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True)
class Response:
    url: str
    status: int
    headers: dict[str, str]
    content: bytes

    def json(self):
        """The body as JSON; a body that is not JSON, or nests too deeply for the parser, is a FetchError."""
        import json

        try:
            return json.loads(self.content)
        except RecursionError:
            raise FetchError(f"{self.url} answered with JSON nested too deeply to read", self.status) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise FetchError(f"{self.url} answered with something that is not JSON: {exc}", self.status) from None


@dataclass
class Politeness:
    """How gently to treat one service."""

    interval: float = 3.0
    retries: int = 5
    backoff: float = 2.0
    max_wait: float = 300.0
    timeout: float = 30.0
    max_bytes: int = 20_000_000


def retry_after_seconds(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    if not value:
        return None
    value = value.strip()
    if (seconds := whole_number(value)) is not None:
        return float(seconds)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


@dataclass
class PoliteClient:
    """A synchronous client for harvesters. `transport` replaces the network (tests replay recordings)."""

    user_agent: str
    allowed_hosts: Iterable[str]
    politeness: dict[str, Politeness] = field(default_factory=dict)
    private_hosts: Iterable[str] = ()
    transport: httpx.BaseTransport | None = None
    resolve: Callable[[str, int], list[str]] = default_resolve
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    jitter: Callable[[], float] = random.random

    def __post_init__(self) -> None:
        self.allowed_hosts = frozenset(h.lower() for h in self.allowed_hosts)
        self.private_hosts = frozenset(h.lower() for h in self.private_hosts)
        self._last: dict[str, float] = {}
        self._pins: dict[tuple[str, int], str] = {}  # (host, port) -> the address check_url accepted
        self._client = httpx.Client(
            transport=self.transport or pinned_transport(self._pins),
            follow_redirects=False,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            headers={"User-Agent": self.user_agent},
            trust_env=False,
        )
        self.requests = 0

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "PoliteClient":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    # --- guards ---------------------------------------------------------------
    def check_url(self, url: str) -> tuple[str, int]:
        """The URL's (host, port) if we may fetch it; FetchRefused otherwise."""
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http"):
            raise FetchRefused(f"refused {url[:200]!r}: only http(s) URLs are fetched")
        host = (parts.hostname or "").lower().rstrip(".")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as exc:
            raise FetchRefused(f"refused {url[:200]!r}: {exc}") from None
        if parts.username or parts.password:
            raise FetchRefused(f"refused {url[:200]!r}: credentials in URLs are not allowed")
        if host not in self.allowed_hosts:
            raise FetchRefused(f"refused {url[:200]!r}: {host or 'no host'} is not an allowed host")
        try:
            addresses = self.resolve(host, port)
        except OSError as exc:
            raise FetchError(f"cannot resolve {host}: {exc}") from None
        if f"{host}:{port}" not in self.private_hosts:
            bad = [a for a in addresses if not address_is_public(a)]
            if bad or not addresses:
                raise FetchRefused(f"refused {url[:200]!r}: {host} resolves to a non-public address {bad[:1]}")
        if not addresses:
            raise FetchError(f"cannot resolve {host}: no address")
        self._pins[(host, port)] = addresses[0]  # where the connection goes: the address checked here
        return host, port

    def _settings_for(self, host: str) -> tuple[str, Politeness]:
        """The rules for a host and the name of the group whose requests are spaced together: a rule for
        `arxiv.org` covers export.arxiv.org too, since arXiv counts all its hosts as one."""
        for name, rules in self.politeness.items():
            if host == name or host.endswith("." + name):
                return name, rules
        return host, Politeness()

    def _wait_turn(self, group: str, rules: Politeness) -> None:
        last = self._last.get(group)
        if last is not None:
            pause = rules.interval - (self.clock() - last)
            if pause > 0:
                self.sleep(pause)
        self._last[group] = self.clock()

    # --- requests -------------------------------------------------------------
    def get(self, url: str, params: dict | None = None, headers: dict | None = None, *,
            max_bytes: int | None = None) -> Response:  # fmt: skip
        return self.request("GET", url, params=params, headers=headers, max_bytes=max_bytes)

    def post_json(self, url: str, payload, params: dict | None = None, headers: dict | None = None) -> Response:
        return self.request("POST", url, params=params, headers=headers, json=payload)

    def request(self, method: str, url: str, params=None, headers=None, json=None, max_bytes: int | None = None
                ) -> Response:  # fmt: skip
        """One logical request: redirects re-checked, retries with back-off; FetchError if it does not succeed.
        `max_bytes`: a cap below the service's for this answer (FetchTooLarge past it)."""
        target = str(httpx.URL(url, params=params)) if params else url
        for _hop in range(MAX_REDIRECTS + 1):
            response = self._with_retries(method, target, headers, json, max_bytes)
            if response.status in REDIRECT_STATUSES and response.headers.get("location"):
                before, target = urlsplit(target), urljoin(target, response.headers["location"])
                after = urlsplit(target)
                if before.scheme == "https" and after.scheme != "https":
                    raise FetchRefused(f"refused a redirect from https to {_short(target)}")
                if (after.hostname or "").lower() != (before.hostname or "").lower():
                    headers = None  # the caller's headers (an API key) were for the host it named
                if response.status == 303:
                    method, json = "GET", None
                continue
            if response.status >= 400:
                detail = error_detail(response.content)
                raise FetchError(
                    f"{method} {_short(target)} answered {response.status}" + (f": {detail}" if detail else ""),
                    response.status,
                    response.content,
                )
            return response
        raise FetchError(f"{method} {_short(url)}: more than {MAX_REDIRECTS} redirects")

    def _with_retries(self, method: str, url: str, headers, json, max_bytes: int | None = None) -> Response:
        host, _port = self.check_url(url)
        group, rules = self._settings_for(host)
        retrier = Retrier(rules.retries, rules.backoff, cap=rules.max_wait, max_wait=rules.max_wait, jitter=self.jitter)
        attempt = 0
        while True:
            self._wait_turn(group, rules)
            last: Response | None = None
            asked: float | None = None
            try:
                response = self._send(method, url, headers, json, rules, max_bytes)
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status not in RETRY_STATUSES:
                    return response
                problem, last = f"status {response.status}", response
                asked = retry_after_seconds(response.headers.get("retry-after"))
            try:
                wait = retrier.next_wait(attempt, asked)
            except GaveUp as gave_up:
                if gave_up.asked is not None:
                    raise FetchError(
                        f"{method} {_short(url)}: the service asks us to wait {gave_up.asked:.0f} s (Retry-After), "
                        f"more than the {rules.max_wait:.0f} s we allow; try again later",
                        429,
                    ) from None
                if last is not None:
                    return last  # the caller reports the status and the service's own words
                raise FetchError(f"{method} {_short(url)} failed after {attempt + 1} attempts ({problem})") from None
            log.info("%s %s: %s; retrying in %.1f s", method, _short(url), problem, wait)
            self.sleep(wait)
            attempt += 1

    def _send(self, method: str, url: str, headers, json, rules: Politeness, max_bytes: int | None = None
              ) -> Response:  # fmt: skip
        self.requests += 1
        cap = rules.max_bytes if max_bytes is None else max(0, min(rules.max_bytes, max_bytes))
        request = self._client.build_request(method, url, headers=headers, json=json, timeout=rules.timeout)
        response = self._client.send(request, stream=True)
        try:
            declared = response.headers.get("content-length")
            if (whole_number(declared) or 0) > cap:
                raise FetchTooLarge(f"{_short(url)}: {int(declared):,} bytes is over the {cap:,}-byte cap", cap)
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > cap:
                    raise FetchTooLarge(f"{_short(url)}: the answer is over the {cap:,}-byte cap", cap)
                chunks.append(chunk)
        finally:
            response.close()
        return Response(str(response.url), response.status_code, dict(response.headers), b"".join(chunks))


def error_detail(body: bytes) -> str:
    """The human part of a JSON error body ({"error": ..., "message": ...}), shortened; '' if there is none."""
    import json

    try:
        payload = json.loads(body[:100_000])
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ""
    if not isinstance(payload, dict):
        return ""
    parts = [str(payload[k]) for k in ("error", "message") if isinstance(payload.get(k), str) and payload[k]]
    return " ".join(dict.fromkeys(parts))[:300]


def _short(url: str) -> str:
    """A URL for messages, without query values that may hold keys."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"
