"""The user's own library as a tool: the archive's papers they kept and the PDFs they added (private to them)."""

from __future__ import annotations

from dataclasses import replace

from assistant.tools.base import Card, ToolDeps, ToolError, ToolResult
from assistant.tools.papers import _byline, _card_kind, search_papers
from pages.base import md_escape


def get_my_library(deps: ToolDeps, query: str = "", limit: int = 10) -> ToolResult:
    """List or search the user's own library: papers of the archive they kept and PDFs they uploaded (only they can
    see those). With a query, searches within the library only; without one, lists it, newest first.

    Args:
        query: Words to look for in the library (a topic, a title, an author); empty lists the library.
        limit: How many papers to return, 1 to 10.
    """
    if deps.user is None or deps.library_ids is None:
        raise ToolError("no signed-in user here: a library belongs to a user")
    ids = deps.library_ids(deps.user)
    if not ids:
        return ToolResult("The user's library is empty: they can keep papers or add PDFs on /me/library.")
    if query.strip():
        return search_papers(replace(deps, only_papers=tuple(ids)), query, limit=limit)
    limit = max(1, min(limit, deps.max_results))
    found = deps.archive.papers(ids, deps.user)
    shown = [found[i] for i in ids if i in found][:limit]
    authors = deps.archive.author_names([p.id for p in shown])
    lines, cards = [f"The user's library: {len(ids)} item{'s' if len(ids) != 1 else ''}, newest first."], []
    for paper in shown:
        n = deps.sources.number(paper)
        subtitle = _byline(authors.get(paper.id, []), paper.year)
        path = deps.sources.entries[paper.id][2]
        lines.append(f"[{n}] {md_escape(paper.title)} ({subtitle}); id {paper.id}; page {path}")
        cards.append(Card(_card_kind(paper.id), paper.id, paper.title, path, subtitle, n))
    if len(ids) > len(shown):
        lines.append(f"({len(ids) - len(shown)} more: ask with a query to search them.)")
    return ToolResult("\n".join(lines), cards)
