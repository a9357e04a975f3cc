"""Paper tools: hybrid search over the index, and the paper page the site shows."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from assistant.tools.base import (
    Card,
    CardKind,
    Evidence,
    PapersFound,
    PassagesFound,
    Quote,
    ToolDeps,
    ToolError,
    ToolResult,
    notice,
)
from retrieval.library.visible import upload_number
from retrieval.scholarly.models import Paper
from retrieval.vectors.index import Filters
from retrieval.vectors.embeddings import split_sentences
from pages.base import byline, md_escape
from pages.paper import paper_page


def _byline(names: list[str], year: int | None) -> str:
    return ", ".join(x for x in (byline(names), str(year) if year else "") if x)


def _in_library(filters: Filters, deps: ToolDeps) -> Filters:
    """In a chat about the user's library, the search sees its papers and uploads only."""
    if deps.only_papers is None:
        return filters
    if not deps.only_papers:
        raise ToolError("the user's library is empty: they can attach a PDF or import a reading list on /me/library")
    wanted = filters.paper_ids or deps.only_papers
    return replace(filters, paper_ids=tuple(p for p in wanted if p in deps.only_papers) or ("none",))


def whole_sentences(text: str, limit: int) -> str:
    """A passage's whole sentences, up to about `limit` characters: a fragment the passage begins or ends with
    (the PDF's text is cut into passages by length) is left out, and a sentence longer than `limit` alone is cut
    at a space, marked "…", never inside a word."""
    sentences = split_sentences(" ".join(text.split()))
    if len(sentences) > 1 and sentences[0][:1].islower():  # begins inside a sentence
        sentences = sentences[1:]
    if len(sentences) > 1 and sentences[-1][-1:] not in ".!?\"')]":  # ends inside one
        sentences = sentences[:-1]
    kept = []
    for sentence in sentences:
        if kept and len(" ".join([*kept, sentence])) > limit:
            break
        kept.append(sentence)
    said = " ".join(kept)
    return said if len(said) <= limit else said[:limit].rsplit(" ", 1)[0] + " …"


def _card_kind(paper_id: str) -> CardKind:
    """A user's own upload is a card with only its page (no references, citations or BibTeX of the catalog's)."""
    return CardKind.UPLOAD if upload_number(paper_id) is not None else CardKind.PAPER


def search_papers(
    deps: ToolDeps,
    query: str,
    limit: int = 5,
    category: str | None = None,
    published_after: date | None = None,
    published_before: date | None = None,
) -> ToolResult:
    """Search the archive's papers by meaning and keywords (hybrid dense + BM25 search over abstracts).

    Returns the best papers, each with its citation number [n], page address, authors, year and the
    sentences that match the query best. Cite papers in the answer by their [n]. In a chat about one
    paper, that paper comes first. A query that names a researcher ("papers by Jane Doe", "J. Doe on
    graph neural networks", "what does Jane Doe work on") lists that person's papers first.

    Args:
        query: What to look for: a topic, a method, a claim, a title or a researcher's name, in plain words.
        limit: How many papers to return, 1 to 10.
        category: Only papers in this arXiv category, e.g. cs.LG or hep-ph.
        published_after: Only papers first submitted on or after this date (YYYY-MM-DD).
        published_before: Only papers first submitted on or before this date (YYYY-MM-DD).
    """
    filters = Filters(
        categories=(category,) if category else (),
        published_from=published_after,
        published_to=published_before,
        viewer=deps.user,  # the user's own uploads too, never anyone else's
    )
    result, hits = _papers_found(deps, query, _in_library(filters, deps), max(1, min(limit, deps.max_results)))
    if not hits:
        return notice(result.note or "No paper matched.")
    weak = not any(h.clears for h in hits)
    weaker = 0 if weak else sum(not h.clears for h in hits)
    hits = hits if weak else [h for h in hits if h.clears]  # under the relevance floor: not an answer
    authors = deps.archive.author_names([h.paper.id for h in hits])
    lines, cards, named = [f"Papers matching {md_escape(result.query)!r}:"], [], []
    if weak:
        lines = [f"Nothing in this archive answers {md_escape(result.query)!r} well: no paper clears the relevance "
                 "floor. These are only the closest matches, weak evidence: say that the archive does not answer "
                 "it rather than answer from them."]  # fmt: skip
    if result.note and not weak:  # how the search read the query ("Read "GRPO" as ..., as papers ... spell it out")
        lines.append(md_escape(result.note))
    if result.people:
        named = list(deps.archive.researchers_by_ids(list(result.people)).values())
        people = "; ".join(f"{md_escape(r.name)} (researcher id {r.id})" for r in named)
        lines.append(f"The query names {people}: their papers, marked 'by the named researcher', come first.")
    for hit in hits:
        n = deps.sources.number(hit.paper)
        subtitle = _byline(authors.get(hit.paper.id, []), hit.paper.year)
        path = deps.sources.entries[hit.paper.id][2]
        mark = "; by the named researcher" if hit.kind == "author" else ""
        lines.append(f"[{n}] {md_escape(hit.paper.title)} ({subtitle}); id {hit.paper.id}; page {path}{mark}")
        lines += [f"    matching: {md_escape(s)}" for s in hit.sentences]
        cards.append(Card(_card_kind(hit.paper.id), hit.paper.id, hit.paper.title, path, subtitle, n,
                          tuple(Quote(s) for s in hit.sentences)))  # fmt: skip
    if weaker:
        lines.append(f"({weaker} weaker match{'es' if weaker != 1 else ''} under the relevance floor left out.)")
    found = PapersFound(result.query, tuple(r.name for r in named), weak=weak, weaker=weaker,
                        note=None if weak else result.note)  # fmt: skip
    return ToolResult("\n".join(lines), cards, data=found)


def _papers_found(deps: ToolDeps, query: str, filters: Filters, limit: int):
    """The archive's search and its hits: in a chat about one paper, that paper first (the user chose it), then the
    rest of the archive."""
    hits = []
    if deps.scope_paper_id:
        scoped = replace(filters, paper_ids=(deps.scope_paper_id,))
        hits += [replace(h, clears=True) for h in deps.archive.search(query, scoped, limit=1, sentences=2).hits]
    result = deps.archive.search(query, filters, limit=limit, sentences=2)
    hits += [h for h in result.hits if h.paper.id != deps.scope_paper_id][: limit - len(hits)]
    return result, hits


def get_paper(deps: ToolDeps, paper_id: str) -> ToolResult:
    """Read one paper's page: title, authors, dates, categories, abstract, links and references.

    Args:
        paper_id: The paper's id as search results give it: an arXiv id such as 2006.07357 (a version
            suffix or an old-style id like hep-th/9901001 works too) or an id like openalex:W2741809807.
    """
    if upload_number(paper_id.strip()) is not None:
        return _own_upload(deps, paper_id.strip())
    page = paper_page(deps.archive, paper_id)
    if page is None:
        raise ToolError(f"no paper with id {paper_id[:100]!r} in this archive; search for it by title instead")
    paper = deps.archive.papers([page.id])[page.id]
    n = deps.sources.number(paper)
    subtitle = _byline(page.authors, page.year)
    card = Card(CardKind.PAPER, page.id, page.title, page.path, subtitle, n)
    return ToolResult(f"Paper [{n}]:\n\n{page.to_markdown()}", [card], data=page)


@dataclass(frozen=True)
class OwnUpload:
    """A user's own PDF as `get_paper` shows it to its owner: what the file says of itself."""

    paper: Paper

    def to_markdown(self) -> str:
        lines = [f"# {md_escape(self.paper.title)}", "", "The user's own upload: private, only they can see it.", ""]
        if self.paper.abstract:
            lines += ["## Abstract", "", md_escape(self.paper.abstract)]
        return "\n".join(lines) + "\n"


def _own_upload(deps: ToolDeps, paper_id: str) -> ToolResult:
    """An upload, for its owner only: anyone else gets the answer a paper that does not exist gets."""
    paper = deps.archive.papers([paper_id], deps.user).get(paper_id) if deps.user else None
    if paper is None:
        raise ToolError(f"no paper with id {paper_id[:100]!r} in this archive; search for it by title instead")
    n = deps.sources.number(paper)
    page = OwnUpload(paper)
    card = Card(CardKind.UPLOAD, paper_id, paper.title, deps.sources.entries[paper_id][2], "", n)
    return ToolResult(f"Paper [{n}]:\n\n{page.to_markdown()}", [card], data=page)


def search_fulltext(deps: ToolDeps, query: str, paper_id: str | None = None, limit: int = 5) -> ToolResult:
    """Search inside papers' full text (passages of their PDFs), for details an abstract does not give.

    Returns passages with their paper's citation number [n], page number and section. Cite them as
    [n] with the page, e.g. "[2, p. 7]". In a chat about one paper, that paper's passages come first.
    Only papers whose PDF has been ingested have full text.

    Args:
        query: What to look for, in plain words: a method detail, a number, a definition, a result.
        paper_id: Only this paper's full text (its id as search results give it).
        limit: How many passages to return, 1 to 10.
    """
    limit = max(1, min(limit, deps.max_results))
    filters = Filters(viewer=deps.user)
    if paper_id:
        resolved = deps.archive.resolve_paper_id(paper_id, viewer=deps.user)
        if resolved is None:
            raise ToolError(f"no paper with id {paper_id[:100]!r} in this archive; search for it by title first")
        filters = Filters(paper_ids=(resolved,), viewer=deps.user)
    filters = _in_library(filters, deps)
    hits = []
    if deps.scope_paper_id and not paper_id:
        scoped = Filters(paper_ids=(deps.scope_paper_id,), viewer=deps.user)
        hits += deps.archive.passages(query, scoped, limit=limit).hits[:3]
    result = deps.archive.passages(query, filters, limit=limit, per_paper=3)
    seen = {(h.paper.id, h.number) for h in hits}
    hits += [h for h in result.hits if (h.paper.id, h.number) not in seen][: max(0, limit - len(hits))]
    if not hits:
        return notice(result.note or "No passage matched.")
    lines, cards, passages = [f"Full-text passages matching {md_escape(result.query)!r}:"], {}, []
    weak = not any(h.clears for h in hits)
    if weak:
        lines[0] = (f"No full-text passage answers {md_escape(result.query)!r} well (none clears the relevance "
                    "floor). These are only the closest passages, weak evidence:")  # fmt: skip
    elif result.note:  # how the search read the query
        lines.append(md_escape(result.note))
    for hit in hits:
        n = deps.sources.number(hit.paper)
        path = deps.sources.entries[hit.paper.id][2]
        where = f"p. {hit.page}" + (f", section {md_escape(hit.section)!r}" if hit.section else "")
        text = hit.text if len(hit.text) <= 700 else hit.text[:700].rsplit(" ", 1)[0] + " …"
        lines.append(f"[{n}, {where}] {md_escape(hit.paper.title)}; page {path}\n    {md_escape(text)}")
        passages.append(Evidence(hit.text, hit.paper.id, n, hit.page, passage=hit.number))
        quote = Quote(whole_sentences(hit.text, 300), hit.page)
        if hit.paper.id in cards:
            card = cards[hit.paper.id]
            cards[hit.paper.id] = replace(card, quotes=card.quotes + (quote,))
        else:
            cards[hit.paper.id] = Card(_card_kind(hit.paper.id), hit.paper.id, hit.paper.title, path, "", n, (quote,))
    found = PassagesFound(result.query, tuple(passages), weak=weak)
    return ToolResult("\n".join(lines), list(cards.values()), data=found)


@dataclass(frozen=True)
class ClaimChecked:
    """What `check_claim` found, for the app: the paper, and whether its own text supports the sentence."""

    paper_id: str
    found: bool
    support: str  # the paper's sentence closest to the claim
    page: int | None  # where it stands (None: the abstract)
    missing: tuple[str, ...] = ()  # the claim's figures and names the paper's text does not hold


def check_claim(deps: ToolDeps, paper_id: str, sentence: str) -> ToolResult:
    """Check one sentence against one paper's own text (its abstract and the full-text passages nearest it), with
    no model judging: found when every figure and name the sentence states is there and a sentence of the paper
    says nearly the same. "Found" means the terms and figures are there, not that the reasoning holds.

    Returns found or not found, the paper's sentence closest to it with its page, and what is not in the paper.

    Args:
        paper_id: The paper's id as search results give it (an arXiv id such as 2006.07357, or openalex:W...).
        sentence: One claim, as it would be written in an answer (a citation in it is ignored).
    """
    supported = deps.archive.support(paper_id.strip(), sentence[:2000], deps.user)
    if supported is None:
        raise ToolError(f"no paper with id {paper_id[:100]!r} in this archive; search for it by title first")
    paper, verdict = supported.paper, supported.verdict
    n = deps.sources.number(paper)
    path = deps.sources.entries[paper.id][2]
    where = f"p. {supported.page}" if supported.page is not None else "its abstract"
    said = f"Found in [{n}] ({where})" if verdict.found else f"Not found in [{n}]: {verdict.reason()}"
    lines = [f"{said}. {md_escape(paper.title)}; page {path}", f"    closest ({where}): {md_escape(verdict.support)}"]
    card = Card(_card_kind(paper.id), paper.id, paper.title, path, "", n,
                (Quote(whole_sentences(verdict.support, 300), supported.page),))  # fmt: skip
    checked = ClaimChecked(paper.id, verdict.found, verdict.support, supported.page, tuple(verdict.missing))
    return ToolResult("\n".join(lines), [card], data=checked)
