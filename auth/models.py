"""User accounts, in their own table beside the catalog (Chainlit's own tables are `users`, `threads`...)."""

from __future__ import annotations

from datetime import datetime, timezone

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
