"""What the web layer calls of the services it may not import (`auth` is beside it, not below) or need not know
(the digests' mail): the follows, the personal API tokens, the use of the model, as protocols the composition root's
objects meet; and what the Zotero pages hold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from retrieval.library.zotero import Libraries, Sealer


class FollowStore(Protocol):
    """`auth.follows.Follows`: the researchers a user follows, and the key of their private feed."""

    def follow(self, username: str, researcher_id: int) -> None: ...
    def unfollow(self, username: str, researcher_id: int) -> None: ...
    def followed(self, username: str) -> list[int]: ...
    def feed_key(self, username: str) -> str: ...
    def rotate(self, username: str) -> str: ...
    def user_for_key(self, key: str) -> str | None: ...


class TokenRow(Protocol):
    """`auth.tokens.ApiToken` as the token pages show it."""

    id: int | None
    username: str
    name: str
    prefix: str
    scope: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None


class TokenStore(Protocol):
    """`auth.tokens.Tokens`: users' personal API tokens."""

    scopes: dict[str, str]

    def live(self, token: TokenRow) -> bool: ...
    def create(self, username: str, name: str, days: int | None = None, scope: str = "read"
               ) -> tuple[TokenRow, str]: ...  # fmt: skip
    def of(self, username: str | None = None) -> Sequence[TokenRow]: ...
    def revoke(self, token_id: int, by: str, admin: bool = False) -> TokenRow | None: ...


class ModelUseRow(Protocol):
    """`auth.usage.UsageRow`: a user's language-model use on one day."""

    day: str
    username: str
    turns: int
    prompt_tokens: int
    completion_tokens: int
    estimated_turns: int
    cost_usd: float | None


class DigestLinks(Protocol):
    """`jobs.digests.DigestPost`: checks the signed links digests carry, and mails an address's confirmation."""

    def genuine(self, owner: str, nonce: str, signature: str) -> bool: ...
    def genuine_confirmation(self, owner: str, nonce: str, email: str, until: int, signature: str) -> bool: ...
    def ask(self, owner: str, email: str) -> str: ...


@dataclass(frozen=True)
class ZoteroSetup:
    """What the pages need: the libraries' store, what seals keys (None: no secret), whether a desktop is reachable."""

    libraries: Libraries
    sealer: Sealer | None
    local: bool = False
