"""The comparison page: papers in rows, aspects in columns, each cell the paper's own sentence that answers the
aspect (`retrieval.search.compare`), as HTML, markdown and CSV from one built page."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from urllib.parse import urlencode

from pages.base import SITE_NAME, Link, PageMeta, breadcrumbs, byline, md_escape, paper_path
from retrieval.archive import Archive
from retrieval.search.compare import MAX_ASPECTS, MAX_PAPERS, Comparison, clean_aspects

# A table costs a restricted search and sentence embeddings per cell: a signed-out reader's tables are smaller.
SIGNED_OUT = (4, 4)  # papers, aspects


@dataclass(frozen=True)
class CompareCell:
    text: str
    where: str  # "abstract" or "p. N"


@dataclass(frozen=True)
class CompareRow:
    paper_id: str
    title: str
    path: str
    byline: str
    cells: list[CompareCell | None]


@dataclass(frozen=True)
class ComparePage:
    ids: list[str]  # as asked (the address keeps them)
    aspects: list[str]
    rows: list[CompareRow]
    unknown: list[str]
    limited: bool = False  # cut to the signed-out size

    @property
    def limit_note(self) -> str:
        papers, aspects = SIGNED_OUT
        return (f"Signed out, a table holds at most {papers} papers and {aspects} aspects; sign in for up to "
                f"{MAX_PAPERS} papers and {MAX_ASPECTS} aspects.")  # fmt: skip

    def address(self, suffix: str = "") -> str:
        if not self.ids:
            return f"/compare{suffix}"
        params = {"ids": ",".join(self.ids), "aspects": ",".join(self.aspects)}
        return f"/compare{suffix}?" + urlencode(params)

    @property
    def path(self) -> str:
        return self.address()

    @property
    def csv_path(self) -> str:
        return self.address(".csv")

    @property
    def markdown_path(self) -> str:
        return self.address(".md")

    def meta(self, base_url: str) -> PageMeta:
        title = f"Comparing {len(self.rows)} papers" if self.rows else "Compare papers"
        crumbs = breadcrumbs(base_url, Link(SITE_NAME, "/"), Link("Compare", self.path))
        description = "What each paper says about " + ", ".join(self.aspects) + ", in its own words."
        return PageMeta(title=title, description=description, path=self.path, json_ld=[crumbs], noindex=True)

    def to_markdown(self) -> str:
        lines = [f"# Comparing {len(self.rows)} papers" if self.rows else "# Compare papers", ""]
        if self.unknown:
            lines += ["Not in this archive: " + ", ".join(md_escape(u) for u in self.unknown), ""]
        if self.limited:
            lines += [self.limit_note, ""]
        if not self.rows:
            lines += ["Give two or more paper ids, e.g. `/compare?ids=2004.07180,1802.05365`.", ""]
            return "\n".join(lines)
        lines += ["Each cell is the paper's own sentence that answers the column best (from its abstract, or from its "
                  "full text with the page).", ""]  # fmt: skip
        lines += self.table()
        lines += ["", f"Download: [CSV]({self.csv_path}) · [markdown]({self.markdown_path})"]
        return "\n".join(lines)

    def table(self, numbers: dict[str, int] | None = None) -> list[str]:
        """The markdown table; with citation numbers (a chat's [n]), each cell cites its paper, and its page when the
        sentence is from the full text."""
        lines = ["| Paper | " + " | ".join(_table_text(a) for a in self.aspects) + " |",
                 "| --- |" + " --- |" * len(self.aspects)]  # fmt: skip
        for row in self.rows:
            n = (numbers or {}).get(row.paper_id)
            cells = [_cell_text(c, n) if c else "—" for c in row.cells]
            head = f"[{n}] " if n else ""
            lines.append(f"| {head}[{_table_text(row.title)}]({row.path}) | " + " | ".join(cells) + " |")
        return lines

    def to_csv(self) -> str:
        """One row per paper: its id and title, then each aspect's sentence and where it was found."""
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL)  # every field one cell, whatever separator a sheet expects
        header = ["paper", "title", *(f"{a}{part}" for a in self.aspects for part in ("", " (where)"))]
        writer.writerow([spreadsheet_safe(value) for value in header])
        for row in self.rows:
            cells = [value for c in row.cells for value in ((c.text, c.where) if c else ("", ""))]
            writer.writerow([spreadsheet_safe(value) for value in (row.paper_id, row.title, *cells)])
        return out.getvalue()


_FORMULA_AFTER_SEPARATOR = re.compile(r"([,;\t|\r\n] *)([=+\-@])")


def spreadsheet_safe(value: str) -> str:
    """A CSV value a spreadsheet shows as text: one starting like a formula (=, +, -, @, a tab or a carriage return)
    gets a leading apostrophe, as OWASP advises, and so does a formula after any separator a spreadsheet might split
    on (`x;=2+3;y` from the URL's aspects), so a paper's text or a link's words never run as a formula in Excel or
    Calc (the writer also quotes every field)."""
    value = _FORMULA_AFTER_SEPARATOR.sub(r"\1'\2", value)
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _cell_text(cell: CompareCell, number: int | None) -> str:
    if number is None:
        return _table_text(f"{cell.text} ({cell.where})")
    cite = f"[{number}, {cell.where}]" if cell.where.startswith("p.") else f"[{number}]"
    return f"{_table_text(cell.text)} {cite}"


def _table_text(text: str) -> str:
    """Untrusted text in one markdown table cell: escaped, no pipe or line break to split the table."""
    return md_escape(" ".join(text.split())).replace("|", "\\|")


def build_compare_page(
    archive: Archive, ids: list[str], aspects: list[str] | None, signed_in: bool = True
) -> ComparePage:
    limited = False
    if not signed_in:
        papers, most = SIGNED_OUT
        wanted = clean_aspects(aspects)
        limited = len(list(dict.fromkeys(ids))) > papers or len(wanted) > most
        ids, aspects = list(dict.fromkeys(ids))[:papers], wanted[:most]
    comparison: Comparison = archive.compare(ids, aspects)
    authors = archive.author_names([p.id for p in comparison.papers])
    rows = []
    for paper in comparison.papers:
        cells = [comparison.cell(paper.id, a) for a in comparison.aspects]
        shown = [CompareCell(c.text, c.where) if c else None for c in cells]
        rows.append(CompareRow(paper.id, paper.title, paper_path(paper), byline(authors.get(paper.id, [])), shown))
    asked = [p.id for p in comparison.papers] + comparison.unknown
    return ComparePage(asked, comparison.aspects, rows, comparison.unknown, limited)
