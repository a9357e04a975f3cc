"""The harvesters' HTTP client: allowed hosts only, no private addresses, polite, bounded, retrying."""

from __future__ import annotations

import pytest

from ingest.addresses import address_is_public
from ingest.http import FetchError, FetchRefused, PoliteClient, Politeness, retry_after_seconds
from tests.replay import Replay, public_resolver


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def make_client(replay: Replay, clock: Clock | None = None, resolve=public_resolver, **politeness) -> PoliteClient:
    clock = clock or Clock()
    rules = Politeness(**({"interval": 3.0, "backoff": 1.0} | politeness))
    return PoliteClient(
        user_agent="ScholarLoom-test/0 (mailto:ops@example.org)",
        allowed_hosts=[
            "export.arxiv.org",
            "arxiv.org",
            "oaipmh.arxiv.org",
            "api.openalex.org",
            "api.semanticscholar.org",
        ],
        politeness={"arxiv.org": rules, "api.openalex.org": rules},
        transport=replay.transport(),
        resolve=resolve,
        sleep=clock.sleep,
        clock=clock,
        jitter=lambda: 0.5,
    )


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://arxiv.org/x",
        "https://evil.example.org/api",
        "http://127.0.0.1/latest/meta-data",
        "http://[::ffff:127.0.0.1]/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8000/",
        "https://user:pw@arxiv.org/abs/1",
    ],
)
def test_urls_outside_the_allow_list_are_refused(url):
    replay = Replay()
    with make_client(replay) as client, pytest.raises(FetchRefused):
        client.get(url)
    assert replay.requests == []  # refused before anything was sent


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "::ffff:127.0.0.1", "10.0.0.8", "169.254.169.254", "::1", "fd00::1", "0.0.0.0", "100.64.1.1",
     # 6to4 carrying 127.0.0.1, 169.254.169.254 and 10.0.0.1; Teredo whose client is 127.0.0.1; NAT64 of the metadata
     "2002:7f00:1::1", "2002:a9fe:a9fe::1", "2002:a00:1::1", "2001:0:4136:e378:8000:63bf:80ff:fffe",
     "64:ff9b::a9fe:a9fe"],
)  # fmt: skip
def test_an_allowed_name_resolving_to_a_private_address_is_refused(address):
    replay = Replay()
    with make_client(replay, resolve=lambda _h, _p: [address]) as client, pytest.raises(FetchRefused):
        client.get("https://export.arxiv.org/api/query")
    assert replay.requests == [] and not address_is_public(address)


def test_a_configured_private_mirror_is_allowed():
    replay = Replay().add("GET", "127.0.0.1", "/oai", "<ok/>")
    client = PoliteClient(
        user_agent="t",
        allowed_hosts=["127.0.0.1"],
        private_hosts=["127.0.0.1:8123"],
        transport=replay.transport(),
        resolve=lambda _h, _p: ["127.0.0.1"],
    )
    assert client.get("http://127.0.0.1:8123/oai").content == b"<ok/>"
    with pytest.raises(FetchRefused):  # the same host on another port is not the configured mirror
        client.get("http://127.0.0.1:9999/oai")


def test_every_redirect_hop_is_checked():
    replay = Replay()
    replay.add("GET", "arxiv.org", "/pdf/1", status=302, headers={"location": "https://arxiv.org/pdf/1v2"})
    replay.add("GET", "arxiv.org", "/pdf/1v2", status=301, headers={"location": "http://169.254.169.254/x"})
    with make_client(replay) as client, pytest.raises(FetchRefused, match="169.254.169.254"):
        client.get("https://arxiv.org/pdf/1")
    assert [r.url.path for r in replay.requests] == ["/pdf/1", "/pdf/1v2"]


def test_retry_after_is_honoured_then_the_request_succeeds():
    clock = Clock()
    replay = Replay()
    replay.add("GET", "api.openalex.org", "/works", status=429, headers={"retry-after": "7"}, times=1)
    replay.add("GET", "api.openalex.org", "/works", status=503, times=1)
    replay.add("GET", "api.openalex.org", "/works", {"results": []})
    with make_client(replay, clock) as client:
        assert client.get("https://api.openalex.org/works").json() == {"results": []}
    assert clock.slept[0] == 7  # Retry-After, as given
    assert clock.slept[1] == pytest.approx(2.0)  # back-off 2**1 s times jitter (0.5 + 0.5)
    assert len(replay.requests) == 3


def test_retries_are_bounded_and_the_error_says_what_failed():
    replay = Replay().add("GET", "api.openalex.org", "/works", status=503)
    with make_client(replay, retries=2) as client, pytest.raises(FetchError, match="503"):
        client.get("https://api.openalex.org/works")
    assert len(replay.requests) == 3


def test_a_retry_after_beyond_the_cap_fails_at_once():
    replay = Replay().add("GET", "api.openalex.org", "/works", status=429, headers={"retry-after": "86400"})
    with make_client(replay) as client, pytest.raises(FetchError, match="Retry-After"):
        client.get("https://api.openalex.org/works")
    assert len(replay.requests) == 1


def test_requests_to_one_service_are_spaced_and_identify_us():
    clock = Clock()
    replay = Replay().add("GET", "export.arxiv.org", "/api/query", "<feed/>").add("GET", "arxiv.org", "/pdf/1", "%PDF")
    with make_client(replay, clock) as client:
        client.get("https://export.arxiv.org/api/query")
        client.get("https://arxiv.org/pdf/1")  # another arXiv host: the same 3-second rule
    assert clock.slept == [3.0]
    assert all(r.headers["user-agent"].startswith("ScholarLoom-test/0") for r in replay.requests)


def test_bodies_over_the_cap_are_refused():
    replay = Replay().add("GET", "arxiv.org", "/pdf/big", b"%PDF" + b"0" * 5000)
    with make_client(replay, max_bytes=1000) as client, pytest.raises(FetchError, match="cap"):
        client.get("https://arxiv.org/pdf/big")


@pytest.mark.parametrize(
    "name, expected",
    [
        ("error_400_invalid_filter.json", "DOESNTEXIST is not a valid field"),
        ("error_400_invalid_select.json", "is not a valid select field"),
    ],
)
def test_error_bodies_reach_the_message(name, expected):
    from ingest.demo import DEMO_DIR

    body = DEMO_DIR / "openalex" / "api_cassettes" / name
    replay = Replay().add("GET", "api.openalex.org", "/works", body, status=400)
    with make_client(replay) as client, pytest.raises(FetchError, match=expected):
        client.get("https://api.openalex.org/works", params={"filter": "doesntexist:1"})


def test_retry_after_as_an_http_date():
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=lambda: 1445412470.0) == 10.0
    assert retry_after_seconds("soon") is None


def test_keys_in_the_query_never_reach_messages():
    replay = Replay().add("GET", "api.openalex.org", "/works", status=400)
    with make_client(replay) as client, pytest.raises(FetchError) as caught:
        client.get("https://api.openalex.org/works", params={"api_key": "SECRET-KEY", "filter": "x"})
    assert "SECRET-KEY" not in str(caught.value) and "/works" in str(caught.value)


def test_6to4_of_a_public_address_is_public():
    assert address_is_public("2002:5db8:d822::1") and address_is_public("2606:4700::1111")


def test_a_redirect_to_another_host_loses_the_callers_headers_and_https_never_drops_to_http():
    replay = Replay()
    replay.add("POST", "api.semanticscholar.org", "/graph/v1/paper/batch", status=307,
               headers={"location": "https://api.openalex.org/works"})  # fmt: skip
    replay.add("POST", "api.openalex.org", "/works", {"ok": True})
    replay.add("GET", "arxiv.org", "/pdf/1", status=302, headers={"location": "http://arxiv.org/pdf/1"})
    with make_client(replay) as client:
        client.post_json("https://api.semanticscholar.org/graph/v1/paper/batch", {"ids": []},
                         headers={"x-api-key": "s2-secret"})  # fmt: skip
        with pytest.raises(FetchRefused, match="from https"):
            client.get("https://arxiv.org/pdf/1")
    first, second, third = replay.requests
    assert first.headers["x-api-key"] == "s2-secret" and "x-api-key" not in second.headers
    assert len(replay.requests) == 3  # the http:// hop was never asked


def test_the_connection_goes_to_the_address_that_was_checked():
    """The checked address is the one connected to: the name is never resolved again (here the system resolver
    does not know it at all, and a second answer of the fake resolver would point elsewhere)."""
    from tests.replay import LocalServer

    server = LocalServer({"/x": lambda _p: (200, b"pinned")})
    answers = iter([["127.0.0.1"], ["10.255.255.1"]])
    port = int(server.host_port.split(":")[1])
    try:
        client = PoliteClient(user_agent="t", allowed_hosts=["rebind.invalid"],
                              private_hosts=[f"rebind.invalid:{port}"], resolve=lambda _h, _p: next(answers))  # fmt: skip
        with client:
            assert client.get(f"http://rebind.invalid:{port}/x").content == b"pinned"
    finally:
        server.stop()


def test_a_requests_own_cap_stops_a_body_of_unknown_length_as_it_passes():
    """A caller's budget (`max_bytes`, below the service's cap) ends the download at the chunk that passes it, even
    without a Content-Length: the rest of the body is never read."""
    import httpx

    from ingest.http import FetchTooLarge

    sent = []

    def chunks():
        for n in range(100):
            sent.append(n)
            yield b"%PDF" if n == 0 else b"0" * 10_000

    client = PoliteClient(user_agent="ScholarLoom-test/0", allowed_hosts=["arxiv.org"], resolve=public_resolver,
                          transport=httpx.MockTransport(lambda _r: httpx.Response(200, content=chunks())))  # fmt: skip
    with client, pytest.raises(FetchTooLarge, match="25,000-byte cap") as refused:
        client.get("https://arxiv.org/pdf/big", max_bytes=25_000)
    assert refused.value.limit == 25_000 and len(sent) <= 4  # three chunks of 10 kB passed it
    with make_client(Replay().add("GET", "arxiv.org", "/pdf/small", b"%PDF" + b"0" * 500)) as client:
        assert len(client.get("https://arxiv.org/pdf/small", max_bytes=25_000).content) == 504
