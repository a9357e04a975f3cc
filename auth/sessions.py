"""The signed-in user of a plain page request: the chat's session cookie, verified."""

from __future__ import annotations

import contextvars

import jwt

COOKIE = "access_token"  # Chainlit's auth cookie (split into access_token_0, _1... when long)


def token_from_cookies(cookies: dict[str, str]) -> str | None:
    if cookies.get(COOKIE):
        return cookies[COOKIE]
    parts, number = [], 0
    while f"{COOKIE}_{number}" in cookies:
        parts.append(cookies[f"{COOKIE}_{number}"])
        number += 1
    return "".join(parts) or None


SESSION_VERSION = "sv"  # the key, in a session token's user metadata, of the account's session version


def signed_in_session(cookies: dict[str, str], secret: str) -> tuple[str, int] | None:
    """(user name, session version) from a valid, unexpired session token signed with our secret; None
    otherwise. Whether the session still counts is `auth.accounts.session_is_live`."""
    token = token_from_cookies(cookies)
    if not token or len(token) > 8000:
        return None
    try:
        payload = jwt.decode(token, secret, algorithms=["HS256"], options={"require": ["exp"]})
    except jwt.PyJWTError:
        return None
    identifier = payload.get("identifier")
    if not isinstance(identifier, str) or not 0 < len(identifier) <= 200:
        return None
    return identifier, session_version(payload.get("metadata"))


def session_version(metadata) -> int:
    version = metadata.get(SESSION_VERSION) if isinstance(metadata, dict) else None
    return version if isinstance(version, int) else 0


# The user name of the signed-in user of the HTTP request being served (set by the app's middleware from the
# verified session cookie); Chainlit's feedback routes do not tell the chat-history layer who is asking.
request_user: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_user", default=None)
# The address of the client whose request is being served (set by the app's middleware), for sign-in throttling.
client_address: contextvars.ContextVar[str] = contextvars.ContextVar("client_address", default="unknown")
