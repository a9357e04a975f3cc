"""The comparison tool: a table of papers by aspects, each cell the paper's own best sentence
(`retrieval.search.compare`), the same table the /compare page shows."""

from __future__ import annotations

from assistant.tools.base import Card, CardKind, ToolDeps, ToolError, ToolResult
from retrieval.search.compare import MAX_ASPECTS, MAX_PAPERS
from pages.base import md_escape
from pages.compare import build_compare_page


def compare_papers(deps: ToolDeps, paper_ids: list[str], aspects: list[str] | None = None) -> ToolResult:
    """Compare papers side by side: for each paper and each aspect, the sentence of that paper (abstract, or full
    text with its page) that answers the aspect best.

    Use it when the user asks to compare papers or wants a table of methods, data sets or results. Write the
    answer as a markdown table, one row per paper and one column per aspect, each cell a short answer in your
    own words drawn only from that paper's evidence below, cited as [n] or [n, p. N].

    Args:
        paper_ids: The papers' ids as search results give them (2 to 8), e.g. ["2004.07180", "1802.05365"].
        aspects: What to compare them on, 1 to 6 short phrases, e.g. ["task", "data set", "method", "main
            result"]. If the user named none, choose the ones that suit these papers; left empty, those four.
    """
    page = build_compare_page(deps.archive, paper_ids[: 2 * MAX_PAPERS], aspects)
    if not page.rows:
        unknown = ", ".join(repr(u) for u in page.unknown[:5]) or "none given"
        raise ToolError(f"no paper to compare (not in this archive: {unknown}); search for them by title first")
    papers = deps.archive.papers([row.paper_id for row in page.rows])
    lines = [f"Comparison of {len(page.rows)} papers on {', '.join(md_escape(a) for a in page.aspects)} "
             f"(at most {MAX_PAPERS} papers and {MAX_ASPECTS} aspects); the table as a page: {page.path}"]  # fmt: skip
    if page.unknown:
        lines.append("Not in this archive (left out): " + ", ".join(md_escape(u) for u in page.unknown))
    cards = [Card(CardKind.COMPARE, ",".join(page.ids), f"Comparison of {len(page.rows)} papers", page.path,
                  ", ".join(page.aspects))]  # fmt: skip
    for row in page.rows:
        n = deps.sources.number(papers[row.paper_id])
        lines.append(f"\n[{n}] {md_escape(row.title)} ({md_escape(row.byline)}); id {row.paper_id}; page {row.path}")
        for aspect, cell in zip(page.aspects, row.cells, strict=True):
            if cell is None:
                lines.append(f"- {md_escape(aspect)}: nothing found")
            else:
                cite = f"[{n}, {cell.where}]" if cell.where.startswith("p.") else f"[{n}]"
                lines.append(f"- {md_escape(aspect)} {cite}: {md_escape(cell.text)}")
        cards.append(Card(CardKind.PAPER, row.paper_id, row.title, row.path, row.byline, n))
    return ToolResult("\n".join(lines), cards, data=page)
