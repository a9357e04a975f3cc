"""What each user's chat turns cost in tokens (and money, where the price is known), per day; and the optional
daily token budget (SCHOLARLOOM_LLM_DAILY_TOKENS) each user's turns are held to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import case, func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from auth.models import LLMUsage


def today(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d")


def record_usage(
    engine: Engine, username: str, model: str, mode: str, prompt_tokens: int, completion_tokens: int,
    estimated: bool = False, cost_usd: float | None = None, now: datetime | None = None,
) -> None:  # fmt: skip
    with Session(engine) as session:
        session.add(LLMUsage(username=username, day=today(now), model=model, mode=mode, prompt_tokens=prompt_tokens,
                             completion_tokens=completion_tokens, estimated=estimated, cost_usd=cost_usd))  # fmt: skip
        session.commit()


def tokens_today(engine: Engine, username: str, now: datetime | None = None) -> int:
    with Session(engine) as session:
        total = session.exec(
            select(func.sum(LLMUsage.prompt_tokens + LLMUsage.completion_tokens)).where(
                LLMUsage.username == username, LLMUsage.day == today(now)
            )
        ).one()
    return int(total or 0)


def budget_notice(engine: Engine, username: str, budget: int | None, now: datetime | None = None) -> str | None:
    """What the user reads when today's budget is spent (the turn is then answered by search alone), else None."""
    if not budget:
        return None
    spent = tokens_today(engine, username, now)
    if spent < budget:
        return None
    return (f"**Today's language-model budget is spent** ({spent:,} of {budget:,} tokens; it starts again at "
            "midnight UTC). Below is what search found for your question (retrieval-only).")  # fmt: skip


@dataclass(frozen=True)
class UsageRow:
    day: str
    username: str
    turns: int
    prompt_tokens: int
    completion_tokens: int
    estimated_turns: int
    cost_usd: float | None  # None: no turn of the day had a known price


def usage_by_user_and_day(engine: Engine, days: int = 31) -> list[UsageRow]:
    """Totals per user and day, newest day first, over the last `days` days that had any use."""
    with Session(engine) as session:
        rows = session.exec(
            select(LLMUsage.day, LLMUsage.username, func.count(), func.sum(LLMUsage.prompt_tokens),
                   func.sum(LLMUsage.completion_tokens), func.sum(case((LLMUsage.estimated.is_(True), 1), else_=0)),
                   func.sum(LLMUsage.cost_usd))  # fmt: skip
            .group_by(LLMUsage.day, LLMUsage.username)
            .order_by(LLMUsage.day.desc(), LLMUsage.username)
        ).all()
    kept = sorted({r[0] for r in rows}, reverse=True)[:days]
    return [UsageRow(d, u, n, int(p or 0), int(c or 0), int(e or 0), cost)
            for d, u, n, p, c, e, cost in rows if d in kept]  # fmt: skip
