"""argon2id password hashing (pwdlib), with a dummy hash so unknown users cost the same time."""

from __future__ import annotations

from functools import lru_cache

MIN_PASSWORD_CHARS = 8
MAX_PASSWORD_CHARS = 1024  # argon2 is fed the whole password; cap the work an attacker can ask for


@lru_cache(maxsize=1)
def hasher():
    from pwdlib import PasswordHash
    from pwdlib.hashers.argon2 import Argon2Hasher

    return PasswordHash((Argon2Hasher(),))


@lru_cache(maxsize=1)
def dummy_hash() -> str:
    return hasher().hash("not a real password, only here to spend the same time")


def hash_password(password: str) -> str:
    return hasher().hash(password)


def verify(password: str, stored: str | None) -> tuple[bool, str | None]:
    """(valid, new hash when the stored one uses outdated parameters). Verifies a dummy when stored is None."""
    if stored is None or len(password) > MAX_PASSWORD_CHARS:
        hasher().verify(password[:MAX_PASSWORD_CHARS], dummy_hash())
        return False, None
    return hasher().verify_and_update(password, stored)
