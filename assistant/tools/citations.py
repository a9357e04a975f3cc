"""Citation tools: what a paper cites, what cites it, and what is like it."""

from __future__ import annotations

from assistant.tools.base import Card, CardKind, Listed, PaperListing, ToolDeps, ToolError, ToolResult, notice
from pages.base import md_escape
from pages.references import MAX_REFERENCES_SHOWN, neighbourhood_card, reference_items


def _resolve(deps: ToolDeps, paper_id: str) -> str:
    resolved = deps.archive.resolve_paper_id(paper_id)
    if resolved is None:
        raise ToolError(f"no paper with id {paper_id[:100]!r} in this archive; search for it by title first")
    return resolved


def _neighbourhood(deps: ToolDeps, paper_id: str, references=None, citing=None) -> Card | None:
    """A card opening the paper page's drawing of what it cites and what cites it (`web.graphs`)."""
    drawn = neighbourhood_card(deps.archive, paper_id, references, citing)
    if drawn is None:
        return None
    graph, path = drawn
    return Card(CardKind.GRAPH, paper_id, graph.label, path, graph.summary)


def _paper_line(deps: ToolDeps, paper, after: str = "") -> tuple[Listed, Card]:
    n = deps.sources.number(paper)
    path = deps.sources.entries[paper.id][2]
    year = str(paper.year) if paper.year else ""
    line = f"{md_escape(paper.title)}" + (f" ({year})" if year else "") + f"; id {paper.id}; page {path}{after}"
    return Listed(n, line), Card(CardKind.PAPER, paper.id, paper.title, path, year, n)


def _listed(lines: list, cards: list[Card]) -> ToolResult:
    listing = PaperListing(tuple(lines))
    return ToolResult(listing.to_markdown(), cards, data=listing)


def get_references(deps: ToolDeps, paper_id: str) -> ToolResult:
    """List the works a paper cites. Those in this archive carry a citation number [n] and an id to open with
    get_paper; the others link to their DOI, arXiv or OpenAlex address.

    Args:
        paper_id: The paper's id as search results give it, e.g. 2007.14454 or openalex:W2741809807.
    """
    resolved = _resolve(deps, paper_id)
    references = reference_items(deps.archive, resolved)
    items, total = references.items, references.total
    if not items:
        return notice(f"No references of {resolved} are known (none came with its metadata or full text).")
    lines = [f"References of {resolved} ({total} known; in this archive first):"]
    cards = []
    if graph := _neighbourhood(deps, resolved, references=references):
        cards.append(graph)
    for item in sorted(items, key=lambda i: i.paper is None):
        if item.paper is not None:
            line, card = _paper_line(deps, item.paper)
            lines.append(line)
            cards.append(card)
        else:  # what the citing paper's own list says of it, then where it is
            said = f" ({md_escape(item.detail)})" if item.detail else ""
            lines.append(f"- {md_escape(item.label)}{said}" + (f" ({item.href})" if item.href else ""))
    if total > len(items):
        lines.append(f"… and {total - len(items)} more (the first {MAX_REFERENCES_SHOWN} are shown).")
    if references.not_held:
        lines.append(f"{len(references.not_held)} of them have an arXiv id and are not in this archive; the reader can "
                     "fetch them all on the paper's page (\"Fetch the references not held\"), or with the button the "
                     "chat shows under a card's references.")
    return _listed(lines, cards)


def get_cited_by(deps: ToolDeps, paper_id: str, limit: int = 20) -> ToolResult:
    """List the papers of this archive that cite a paper (newest first), and how often it is cited overall
    according to OpenAlex or Semantic Scholar when known.

    Args:
        paper_id: The paper's id as search results give it.
        limit: How many citing papers to list, 1 to 50.
    """
    resolved = _resolve(deps, paper_id)
    found = deps.archive.cited_by(resolved, limit=max(1, min(limit, 50)))
    overall = (
        f" Overall it is cited {found.outside_count} times (OpenAlex/Semantic Scholar)." if found.outside_count else ""
    )
    paper = deps.archive.papers([resolved]).get(resolved)
    named = f"{md_escape(paper.title)} ({resolved})" if paper else resolved  # titles are paper text: escaped
    if not found.papers:
        return notice(f"No paper in this archive cites {named}.{overall}")
    lines = [f"{found.total} paper{'s' if found.total != 1 else ''} in this archive cite {named}.{overall}"]
    cards = []
    if graph := _neighbourhood(deps, resolved, citing=found):
        cards.append(graph)
    for paper in found.papers:
        line, card = _paper_line(deps, paper)
        lines.append(line)
        cards.append(card)
    return _listed(lines, cards)


def similar_papers(deps: ToolDeps, paper_id: str, limit: int = 5) -> ToolResult:
    """Find the papers closest in meaning to a paper (nearest neighbours of its title and abstract).

    Args:
        paper_id: The paper's id as search results give it.
        limit: How many papers to return, 1 to 10.
    """
    resolved = _resolve(deps, paper_id)
    found = deps.archive.similar(resolved, limit=max(1, min(limit, deps.max_results)))
    if not found:
        return notice(f"No paper close to {resolved} was found.")
    lines, cards = [f"Papers closest to {resolved}:"], []
    for paper, score in found:
        line, card = _paper_line(deps, paper, f"; similarity {score:.2f}")
        lines.append(line)
        cards.append(card)
    return _listed(lines, cards)
