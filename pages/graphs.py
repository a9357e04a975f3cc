"""The citation graph and the co-author network as pictures: SVG drawn on the server, built once with the page.

Every node is a link (our page for what is here, our fetch page for an arXiv paper that is not, a DOI's or OpenAlex's
page marked as leaving), named for screen readers by its whole title; the figure says in words what it shows, and the
page's own lists (References, Cited by, Researcher network) hold the same as text. No script and no inline style:
colours come from classes in site.css (the pages' CSP allows no inline style), shapes and dashes tell held from not
held without colour. Paper text is escaped wherever it appears; a graph draws at most `MAX_SIDE` works a side
(`MAX_COAUTHORS` people) and says how many more there are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

MAX_SIDE = 25  # works drawn on each side of a paper (cites / cited by)
MAX_COAUTHORS = 20  # co-authors drawn around a researcher (the page lists as many)
LABEL_CHARS = 38
WIDTH = 820
ROW = 24  # vertical room of one work in a column


@dataclass(frozen=True)
class Node:
    key: str
    label: str  # drawn beside the node (cut to `LABEL_CHARS`)
    name: str  # what a screen reader and the tooltip say: the whole title or name, and what the node is
    href: str | None
    kind: str  # the class that colours it: center, held, not-held, leaves, person
    radius: float
    x: float
    y: float
    anchor: str = "start"  # where the label sits: "start" (right of the node), "end" (left) or "middle" (below)
    above: bool = False  # a "middle" label above the node instead (a node at the top of a ring)


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    width: float = 1.0
    kind: str = "cites"  # "cites" (an arrow from citing to cited) or "with" (people who wrote together)


@dataclass(frozen=True)
class Graph:
    """A drawn graph and what it says in words (`summary`), with its legend."""

    label: str  # the figure's name, e.g. "Citation neighbourhood of <title>"
    summary: str  # its text alternative, one or two sentences
    width: int
    height: int
    nodes: list[Node]
    edges: list[Edge]
    legend: list[tuple[str, str]]  # (kind, what it means)
    notes: list[tuple[float, float, str, str]] = field(default_factory=list)  # (x, y, anchor, text): "+ 12 more"

    def svg(self) -> str:
        """The picture as an `<svg>` element, every text escaped."""
        at = {n.key: n for n in self.nodes}
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" viewBox="0 0 {self.width} {self.height}" '
            f'width="100%" role="group" aria-label="{_attr(self.label)}">',
            f"<title>{escape(self.label)}</title><desc>{escape(self.summary)}</desc>",
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>',
        ]
        for edge in self.edges:
            a, b = at.get(edge.source), at.get(edge.target)
            if a is None or b is None:
                continue
            x1, y1, x2, y2 = _trimmed(a, b)
            marker = ' marker-end="url(#arrow)"' if edge.kind == "cites" else ""
            parts.append(f'<line class="edge {edge.kind}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                         f'stroke-width="{edge.width:.1f}"{marker}/>')  # fmt: skip
        for node in self.nodes:
            parts.append(_node(node))
        for x, y, anchor, text in self.notes:
            parts.append(f'<text class="note" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(text)}</text>')
        parts.append(self._legend())
        parts.append("</svg>")
        return "".join(parts)

    def _legend(self) -> str:
        items, x = ['<g class="legend">'], 8.0
        for kind, meaning in self.legend:
            items.append(f'<circle class="node {kind}" cx="{x + 6:.1f}" cy="14" r="6"/>'
                         f'<text x="{x + 16:.1f}" y="18">{escape(meaning)}</text>')  # fmt: skip
            x += 26 + 6.6 * len(meaning)
        return "".join(items) + "</g>"


def _attr(text: str) -> str:
    return escape(text, quote=True)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


def _node(node: Node) -> str:
    circle = f'<circle class="node {node.kind}" cx="{node.x:.1f}" cy="{node.y:.1f}" r="{node.radius:.1f}"/>'
    if node.anchor == "middle":
        tx, ty = node.x, (node.y - node.radius - 6) if node.above else (node.y + node.radius + 14)
    else:
        gap = node.radius + 6
        tx, ty = (node.x + gap if node.anchor == "start" else node.x - gap), node.y + 4
    text = f'<text x="{tx:.1f}" y="{ty:.1f}" text-anchor="{node.anchor}">{escape(_short(node.label))}</text>'
    inner = f"<title>{escape(node.name)}</title>{circle}{text}"
    if not node.href:
        return f'<g class="item">{inner}</g>'
    rel = ' rel="external noopener"' if node.kind == "leaves" else ""
    return f'<a href="{_attr(node.href)}" aria-label="{_attr(node.name)}"{rel}>{inner}</a>'


def _trimmed(a: Node, b: Node) -> tuple[float, float, float, float]:
    """The line between two nodes, from edge of circle to edge of circle (so an arrow's head shows)."""
    dx, dy = b.x - a.x, b.y - a.y
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    return a.x + ux * a.radius, a.y + uy * a.radius, b.x - ux * (b.radius + 1), b.y - uy * (b.radius + 1)


def radius_for(count: int | None, smallest: float = 4.0, largest: float = 13.0) -> float:
    """A node's size from how often a work is cited (or how many papers two people share): grows with the logarithm,
    so one famous work does not hide the rest."""
    if not count or count < 1:
        return smallest
    return min(largest, smallest + 1.5 * math.log2(1 + count))


@dataclass(frozen=True)
class Work:
    """One work in a paper's neighbourhood."""

    title: str
    href: str | None
    kind: str  # held, not-held or leaves
    cited_by: int | None = None


KIND_WORDS = {"held": "in this archive", "not-held": "not held here", "leaves": "outside ScholarLoom (the link leaves)"}


def paper_neighbourhood(title: str, cites: list[Work], cited_by: list[Work], cites_total: int,
                        cited_by_total: int) -> Graph | None:  # fmt: skip
    """The paper in the middle, the works it cites on the left (list order), the papers citing it on the right."""
    if not cites and not cited_by:
        return None
    left, right = cites[:MAX_SIDE], cited_by[:MAX_SIDE]
    rows = max(len(left) + (cites_total > len(left)), len(right) + (cited_by_total > len(right)), 3)
    top, height = 56, 56 + rows * ROW + 40
    middle = WIDTH / 2
    nodes = [Node("paper", title, f"This paper: {title}", None, "center", 12, middle, top + rows * ROW / 2,
                  anchor="middle")]  # fmt: skip
    edges, notes = [], []
    for side, works, x, anchor, total in (("cites", left, middle - 150, "end", cites_total),
                                          ("cited", right, middle + 150, "start", cited_by_total)):  # fmt: skip
        offset = top + (rows - len(works) - (total > len(works))) * ROW / 2
        for n, work in enumerate(works):
            key = f"{side}:{n}"
            role = "cited by this paper" if side == "cites" else "cites this paper"
            nodes.append(Node(key, work.title, f"{work.title} ({role}; {KIND_WORDS[work.kind]})", work.href, work.kind,
                              radius_for(work.cited_by, 4, 9), x, offset + (n + 0.5) * ROW, anchor))  # fmt: skip
            edges.append(Edge("paper", key) if side == "cites" else Edge(key, "paper"))
        if total > len(works):
            label = f"+ {total - len(works)} more (the lists below)"
            notes.append((x, offset + (len(works) + 0.7) * ROW, anchor, label))
    notes += [(middle - 150, top - 10, "end", "Cites"), (middle + 150, top - 10, "start", "Cited by (here)")]
    held = sum(w.kind == "held" for w in left)
    summary = (f"{title} cites {cites_total} work{'s' if cites_total != 1 else ''}; of the {len(left)} drawn, {held} "
               f"{'is' if held == 1 else 'are'} in this archive. It is cited by {cited_by_total} "
               f"paper{'s' if cited_by_total != 1 else ''} here. The References and Cited by lists on this page say "
               "the same in text.")  # fmt: skip
    legend = [("center", "this paper"), ("held", "in this archive"), ("not-held", "not held here"),
              ("leaves", "leaves ScholarLoom")]  # fmt: skip
    return Graph(f"Citation neighbourhood of {title}", summary, WIDTH, height, nodes, edges, legend, notes)


@dataclass(frozen=True)
class Person:
    key: int
    name: str
    href: str
    shared: int  # papers written with the researcher


def coauthor_network(name: str, people: list[Person], links: list[tuple[int, int, int]], total: int) -> Graph | None:
    """The researcher in the middle, co-authors around by shared papers (most first, clockwise from the top); a line
    from the middle to each, thicker for more shared papers, and between two co-authors who wrote with each other
    on the researcher's papers (`links`: (one, other, papers))."""
    if not people:
        return None
    shown = people[:MAX_COAUTHORS]
    ring = 240 if len(shown) > 8 else 130
    size = 2 * ring + 120
    cx, cy = WIDTH / 2, size / 2 + 14
    nodes = [Node("me", name, f"{name} (this researcher)", None, "center", 13, cx, cy, anchor="middle")]
    edges = []
    for n, person in enumerate(shown):
        angle = -math.pi / 2 + 2 * math.pi * n / len(shown)
        x, y = cx + ring * math.cos(angle), cy + ring * math.sin(angle)
        anchor = "middle" if abs(math.cos(angle)) < 0.2 else ("start" if math.cos(angle) > 0 else "end")
        papers = f"{person.shared} shared paper{'s' if person.shared != 1 else ''}"
        nodes.append(Node(f"p{person.key}", person.name, f"{person.name} ({papers})", person.href, "person",
                          radius_for(person.shared, 5, 12), x, y, anchor, above=math.sin(angle) < 0))  # fmt: skip
        edges.append(Edge("me", f"p{person.key}", min(6.0, 0.8 + math.log2(1 + person.shared)), "with"))
    drawn = {p.key for p in shown}
    for one, other, count in links:
        if one in drawn and other in drawn:
            edges.append(Edge(f"p{one}", f"p{other}", min(4.0, 0.5 + 0.5 * math.log2(1 + count)), "among"))
    notes = [(cx, size + 4, "middle", f"+ {total - len(shown)} more co-authors in the list below")] \
        if total > len(shown) else []  # fmt: skip
    among = sum(e.kind == "among" for e in edges)
    summary = (f"{name} has written with {total} researcher{'s' if total != 1 else ''} in this archive; the "
               f"{len(shown)} with the most shared papers are drawn, with {among} pair{'s' if among != 1 else ''} of "
               "them who also wrote together. The Researcher network list on this page says the same in text.")
    legend = [("center", "this researcher"), ("person", "co-author (size: shared papers)")]
    return Graph(f"Co-author network of {name}", summary, WIDTH, size + 16, nodes, edges, legend, notes)
