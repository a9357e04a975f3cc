"""OAuth sign-in end to end: `scholarloom serve` with Chainlit's generic provider switched on by its usual
environment variables, against a small OpenID-style provider on 127.0.0.1. Users are matched by the provider's
stable subject id: a changed e-mail is the same account, another subject is another account."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from auth.accounts import oauth_account, provider_subject
from harness.serve import served
from scholarloom.settings import Settings


class Provider:
    """Answers the token and user-info requests of the authorization-code flow; `person` is who signs in."""

    def __init__(self) -> None:
        self.person: dict = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _json(self, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # the token endpoint
                form = parse_qs(self.rfile.read(int(self.headers["content-length"])).decode())
                assert form["client_secret"] == ["provider-secret"] and form["grant_type"] == ["authorization_code"]
                self._json({"access_token": "token-" + form["code"][0], "token_type": "bearer"})

            def do_GET(self) -> None:  # the user-info endpoint
                assert self.headers["authorization"].startswith("Bearer token-")
                self._json(outer.person)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture(scope="module")
def oauth_app(demo, tmp_path_factory):
    provider = Provider()
    data_dir = tmp_path_factory.mktemp("oauth-app")
    (data_dir / "models").symlink_to(demo.models_dir)
    with served(
        data_dir,
        OAUTH_GENERIC_CLIENT_ID="scholarloom",
        OAUTH_GENERIC_CLIENT_SECRET="provider-secret",
        OAUTH_GENERIC_AUTH_URL=provider.base + "/authorize",
        OAUTH_GENERIC_TOKEN_URL=provider.base + "/token",
        OAUTH_GENERIC_USER_INFO_URL=provider.base + "/userinfo",
        OAUTH_GENERIC_SCOPES="openid email",
    ) as (base, _process):
        yield base, provider, Settings(data_dir=data_dir)
    provider.server.shutdown()


def _sign_in(base: str) -> str | None:
    """The whole redirect dance; the signed-in user's name, or None when sign-in was refused."""
    with httpx.Client(base_url=base) as browser:
        start = browser.get("/chat/auth/oauth/generic")
        assert start.status_code in (302, 307)
        state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
        back = browser.get("/chat/auth/oauth/generic/callback", params={"code": "c0de", "state": state})
        if "access_token" not in browser.cookies:
            return None
        assert back.status_code in (302, 307)
        return browser.get("/chat/user").json()["identifier"]


def test_oauth_users_are_matched_by_subject_id(oauth_app):
    base, provider, settings = oauth_app
    config = httpx.get(base + "/chat/auth/config").json()
    assert config["oauthProviders"] == ["generic"] and config["passwordAuth"] is True

    provider.person = {"sub": "248289761001", "email": "jane@uni.example", "name": "Jane"}
    first = _sign_in(base)
    assert first == "generic-jane@uni.example"
    provider.person = {"sub": "248289761001", "email": "jane.doe@another.example", "name": "Jane Doe"}
    assert _sign_in(base) == first  # a new e-mail, the same person
    provider.person = {"sub": "99", "email": "jane@uni.example", "name": "Impostor"}
    assert _sign_in(base) not in (None, first)  # the old e-mail under another subject is someone else
    provider.person = {"email": "nosubject@uni.example"}
    assert _sign_in(base) is None  # no stable id, no account


def test_linking_rules(demo, tmp_path):
    engine = Settings(data_dir=tmp_path).catalog().engine
    from auth.accounts import create_tables

    create_tables(engine)
    assert provider_subject({"id": 583231, "login": "octocat"}) == "583231"
    assert provider_subject({"sub": "abc", "id": 1}) == "abc"
    assert provider_subject({"id": True}) is None and provider_subject({}) is None
    made = oauth_account(engine, "github", "583231", "octocat", allow_signup=True)
    assert made.username == "github-octocat" and made.password_hash is None
    assert oauth_account(engine, "github", "583231", "renamed", allow_signup=False).id == made.id
    assert oauth_account(engine, "gitlab", "583231", "octocat", allow_signup=False) is None
    other = oauth_account(engine, "github", "1", "octocat", allow_signup=True)
    assert other.username == "github-octocat-2"
    from sqlmodel import Session

    with Session(engine) as session:
        account = session.get(type(made), made.id)
        account.active = False
        session.add(account)
        session.commit()
    assert oauth_account(engine, "github", "583231", "octocat", allow_signup=True) is None
