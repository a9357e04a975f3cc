"""User accounts, in their own table beside the catalog (Chainlit's own tables are `users`, `threads`...)."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Account(SQLModel, table=True):
    __tablename__ = "accounts"

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(unique=True, index=True, max_length=64)
    password_hash: str | None = Field(default=None, description="argon2id; null for OAuth-only accounts")
    created_at: datetime = Field(default_factory=_now)
    active: bool = True
    is_admin: bool | None = Field(default=False, description="sees and runs jobs (/admin/jobs); null is false")
    session_version: int | None = Field(
        default=0, description="in every session token; bumping it ends them all (password change, disable)"
    )


class ExternalIdentity(SQLModel, table=True):
    """An OAuth provider's stable subject id (never the e-mail or login, which can change) linked to an account."""

    __tablename__ = "external_identities"

    id: int | None = Field(default=None, primary_key=True)
    provider: str = Field(index=True, max_length=40)
    subject: str = Field(max_length=255)
    account_id: int = Field(foreign_key="accounts.id", index=True)
    created_at: datetime = Field(default_factory=_now)

    __table_args__ = (UniqueConstraint("provider", "subject", name="uq_identity_provider_subject"),)


class SignInFailures(SQLModel, table=True):
    """Recent failed sign-ins per throttling key ("user:<name>" or "addr:<address>"), read by auth.throttle."""

    __tablename__ = "sign_in_failures"

    key: str = Field(primary_key=True, max_length=200)
    failures: int = 0
    blocked_until: float = 0.0  # seconds since the epoch
    updated: float = Field(default=0.0, index=True)


class UsedNonce(SQLModel, table=True):
    """One-time values already spent (the chat-paper intent cookie's), shared by every server process."""

    __tablename__ = "used_nonces"

    nonce: str = Field(primary_key=True, max_length=64)
    used_at: float = Field(default=0.0, index=True)  # seconds since the epoch


class LLMUsage(SQLModel, table=True):
    """One chat turn's use of the language model: tokens (as the provider reported them, or estimated) and the cost
    where litellm knows the model's price. Per user and day for admins, and for the daily budget."""

    __tablename__ = "llm_usage"

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(index=True, max_length=150)
    day: str = Field(index=True, max_length=10)  # YYYY-MM-DD, UTC
    at: datetime = Field(default_factory=_now)
    model: str = Field(max_length=200)
    mode: str = Field(max_length=20)  # agent, pipeline
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # the provider reported no usage: about four characters a token
    cost_usd: float | None = None


class ApiToken(SQLModel, table=True):
    """A personal API token (`auth.tokens`): what it is called, whose it is, what it may do, and its SHA-256 digest;
    never the token itself. `prefix` ("sl_" and 8 characters) finds it and names it on the account page."""

    __tablename__ = "api_tokens"

    id: int | None = Field(default=None, primary_key=True)
    username: str = Field(index=True, max_length=150)
    name: str = Field(max_length=80)
    prefix: str = Field(unique=True, index=True, max_length=16)
    digest: str = Field(max_length=64)  # hex SHA-256 of the whole token
    scope: str = Field(default="read", max_length=20)  # read, or library (read, and write to one's own library)
    created_at: datetime = Field(default_factory=_now)
    expires_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    revoked_by: str | None = Field(default=None, max_length=150)
