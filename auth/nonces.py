"""One-time values: spent once in the database, so a second process or a restart cannot spend them again."""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from auth.models import UsedNonce

KEEP_SECONDS = 24 * 3600  # far longer than any intent cookie lives (15 minutes)


def spend(engine: Engine, nonce: str, clock: Callable[[], float] = time.time) -> bool:
    """True the first time a nonce is spent, False ever after (within KEEP_SECONDS); old ones are forgotten."""
    if not nonce or len(nonce) > 64:
        return False
    now = clock()
    with Session(engine) as session:
        session.exec(delete(UsedNonce).where(UsedNonce.used_at < now - KEEP_SECONDS))
        session.add(UsedNonce(nonce=nonce, used_at=now))
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            return False
    return True
