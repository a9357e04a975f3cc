"""What every route answers alike (`web.protocol`): validation errors never echo the body (bytes that are not UTF-8
were a 500 with a traceback), `OPTIONS` lists every method of the path, a method no route has is a 405 before any
token is looked at, and /openapi.json lists every refusal. Then the fuzzer again, with a library token: every
operation with generated requests, a body that is not UTF-8, `OPTIONS` and `TRACE`, and nothing undocumented."""

from __future__ import annotations

import logging

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from auth.accounts import add_user
from auth.tokens import create_token
from tests.web.test_follow import app_with_users

NOT_UTF8 = b"\xff\xfe{\"title\": \"\xc3\x28\x80\"}"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def app(demo):
    return app_with_users(demo, "ines")


def _token(demo, user: str, scope: str = "library") -> dict[str, str]:
    add_user(demo.catalog().engine, user, "a long enough password", replace=True)
    return {"Authorization": f"Bearer {create_token(demo.catalog().engine, user, 'a script', scope=scope)[1]}"}


def _client(app, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", headers=headers or {})


async def test_a_body_that_is_not_utf8_is_refused_without_an_echo_or_a_traceback(app, demo, caplog):
    script = _client(app, _token(demo, "ines"))
    caplog.set_level(logging.ERROR)
    # The finding: the import's address falls into the item's route (its id is no number: 405 now, it has no PATCH).
    wrong = await script.patch("/api/library/import", content=NOT_UTF8, headers={"content-type": "text/plain"})
    assert wrong.status_code == 405 and "PATCH" not in wrong.headers["allow"]
    for kind in ("text/plain", "application/json", "application/octet-stream"):
        answer = await script.patch("/api/library/1", content=NOT_UTF8, headers={"content-type": kind})
        assert answer.status_code in (400, 422), (kind, answer.text)
        assert '"input"' not in answer.text and "\\u00ff" not in answer.text and "title" not in answer.text
    said = (await script.patch("/api/library/1", json={"title": "", "authors": "not a list"})).json()["detail"]
    assert {e["loc"][-1] for e in said} == {"title", "authors"} and all(set(e) == {"loc", "msg", "type"} for e in said)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_options_lists_every_method_of_the_path(app):
    anonymous = _client(app)
    for path, methods in [("/api/library/1", "DELETE, GET, OPTIONS, PATCH"), ("/api/library", "GET, OPTIONS, POST"),
                          ("/api/library/import", "OPTIONS, POST"), ("/api/papers/2006.07357", "GET, OPTIONS")]:
        answer = await anonymous.options(path)
        assert (answer.status_code, answer.headers.get("allow")) == (204, methods), path
        wrong = await anonymous.put(path)
        assert (wrong.status_code, wrong.headers.get("allow")) == (405, methods), path
    assert "POST" in (await anonymous.options("/mcp")).headers["allow"]
    assert (await anonymous.options("/no/such/address")).status_code == 404


async def test_trace_with_a_token_is_a_405_not_a_question_of_scope(app, demo):
    for scope, path in [("library", "/api/library/1"), ("read", "/api/papers/2006.07357"), ("read", "/api/library")]:
        script = _client(app, _token(demo, "ines", scope))
        for method in ("TRACE", "PUT", "CONNECT", "BREW"):
            answer = await script.request(method, path)
            assert answer.status_code == 405 and "OPTIONS" in answer.headers["allow"], (scope, path, method)
            assert method in answer.json()["detail"]
    # An address no route has (found by the generated requests: a newline before the id) answers 404 to a TRACE,
    # not a 403 of the token's scope.
    script = _client(app, _token(demo, "ines", "library"))
    for method in ("TRACE", "BREW"):
        assert (await script.request(method, "/api/papers/%0A2006.07357")).status_code == 404, method
    assert (await script.put("/api/papers/%0A2006.07357")).status_code == 403  # a write stays a question of scope


async def test_the_schema_lists_the_refusals_of_every_operation(app):
    spec = (await _client(app).get("/openapi.json")).json()
    operations = [(path, method, op) for path, item in spec["paths"].items() for method, op in item.items()]
    assert len(operations) == 14  # (/api/support: issue 71)
    for path, method, operation in operations:
        said = set(operation["responses"])
        assert {"401", "413", "429"} <= said, (path, method)
        assert method == "get" or "403" in said, (path, method)
    assert "503" in spec["paths"]["/api/search"]["get"]["responses"]
    assert "400" in spec["paths"]["/api/library/{upload_id}"]["patch"]["responses"]  # a body that is not JSON


def test_the_api_with_a_library_token_against_its_openapi_description(app, demo):
    """Each operation with a token of its own (its own rate, its own user's library), generated requests (valid and
    not), and three probes of each request's address: a body that is not UTF-8, `OPTIONS` and `TRACE`."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 14  # (/api/support: issue 71)
    client = TestClient(app, raise_server_exceptions=True)
    for n, operation in enumerate(operations):
        token = _token(demo, f"fuzz{n}")
        cases = st.one_of(operation.as_strategy(), operation.as_strategy(GenerationMode.NEGATIVE))

        @given(case=cases)
        @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def exercise(case):
            case.call_and_validate(headers=token, checks=CHECKS)
            _probe(client, case, token)

        exercise()


def _probe(client: TestClient, case, token: dict[str, str]) -> None:
    path = case.formatted_path
    for kind in ("application/json", "text/plain"):
        body = client.request(case.method, path, params=case.query, content=NOT_UTF8,
                              headers={**token, "content-type": kind})  # fmt: skip
        case.validate_response(body, checks=CHECKS)
        assert '"input"' not in body.text, body.text
    options = client.options(path, headers=token)
    if options.status_code != 404:  # (a generated id that is no number is at no address)
        assert options.status_code == 204, (path, options.text)
        case.validate_response(options, checks=[not_a_server_error, allow_header_conformance])
    trace = client.request("TRACE", path, headers=token)
    assert trace.status_code in (404, 405) and (trace.status_code == 404 or trace.headers["allow"]), path
