"""The objects a running server shares, built once in the entry point from the settings."""

from __future__ import annotations

import contextvars
import logging
from dataclasses import dataclass

from assistant.agent import Agent
from assistant.tools import SourceBook, ToolDeps
from auth.accounts import create_tables, sign_in
from auth.models import Account
from auth.throttle import Throttle
from retrieval.catalog import Catalog
from retrieval.embeddings import Embedder
from retrieval.index import Index
from scholarloom.settings import Settings

log = logging.getLogger(__name__)
# The address of the client whose request is being served (set by the app's middleware).
client_address: contextvars.ContextVar[str] = contextvars.ContextVar("client_address", default="unknown")


@dataclass
class Runtime:
    settings: Settings
    catalog: Catalog
    index: Index
    embedder: Embedder
    agent: Agent
    throttle: Throttle | None = None  # sign-in failures, counted in the catalog's database

    def __post_init__(self) -> None:
        if self.throttle is None:
            self.throttle = Throttle(self.catalog.engine)

    @classmethod
    def build(cls, settings: Settings) -> "Runtime":
        catalog = settings.catalog()
        create_tables(catalog.engine)
        agent = Agent(settings.llm_config(), max_tool_rounds=settings.agent.max_tool_rounds)
        return cls(settings, catalog, settings.index(), settings.embedder(), agent)

    def sign_in(self, username: str, password: str, address: str) -> Account | None:
        return sign_in(self.catalog.engine, self.throttle, username, password, address)

    def tool_deps(self, user: str, sources: SourceBook, scope_paper_id: str | None = None) -> ToolDeps:
        return ToolDeps(
            self.catalog, self.index, self.embedder, user=user, sources=sources, scope_paper_id=scope_paper_id
        )


_current: Runtime | None = None


def install(runtime: Runtime) -> None:
    """Make the runtime reachable from the Chainlit handlers, which Chainlit imports by file path."""
    global _current
    _current = runtime


def current() -> Runtime:
    if _current is None:
        raise RuntimeError("the ScholarLoom runtime is not installed; start the app with `scholarloom serve`")
    return _current
