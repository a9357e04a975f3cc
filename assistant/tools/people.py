"""Researcher and institution tools: find, read the profile page, and gather what a summary may say."""

from __future__ import annotations

from assistant.tools.base import Card, CardKind, Listed, PaperListing, ProfileSummary, ToolDeps, ToolError, ToolResult
from pages.base import institution_path, md_escape, researcher_path
from pages.people import institution_page, researcher_page

SUMMARY_PAPERS = 8
SUMMARY_HEAD = "Summary from the catalog (statistics and titles only): "


def _researcher_card(researcher_id: int, name: str, subtitle: str) -> Card:
    return Card(CardKind.RESEARCHER, str(researcher_id), name, researcher_path(researcher_id, name), subtitle)


def _span(first, last) -> str:
    return "" if not first else str(first) if first == last else f"{first}–{last}"


def find_researcher(deps: ToolDeps, name: str, limit: int = 5) -> ToolResult:
    """Find researchers by name (or an OpenAlex id, ORCID or researcher id), with what tells namesakes apart:
    paper count, years, main fields, institutions and frequent co-authors.

    Args:
        name: A full or partial name such as "Joseph Gonzalez", or an id such as A5023888391 or an ORCID.
        limit: How many candidates to return, 1 to 10.
    """
    found = deps.archive.find_researchers(name, limit=max(1, min(limit, 10)))
    if not found:
        raise ToolError(f"no researcher named {name[:100]!r} in this archive; try another spelling or a paper search")
    lines, cards = [f"Researchers matching {md_escape(name[:100])!r} (most papers first):"], []
    for c in found:
        r = c.researcher
        fields = ", ".join(f"{f} ({n})" for f, n in c.fields) or "no category"
        facts = [f"{c.paper_count} paper{'s' if c.paper_count != 1 else ''}", _span(*c.years), fields]
        if c.institutions:
            facts.append("at " + "; ".join(c.institutions))
        if c.coauthors:
            facts.append("with " + ", ".join(c.coauthors))
        text = "; ".join(md_escape(f) for f in facts if f)
        lines.append(f"- {md_escape(r.name)} (researcher id {r.id}; page {researcher_path(r.id, r.name)}): {text}")
        cards.append(_researcher_card(r.id, r.name, "; ".join(x for x in facts[:3] if x)))
    return ToolResult("\n".join(lines), cards)


def get_researcher(deps: ToolDeps, researcher_id: int, category: str | None = None, page: int = 1) -> ToolResult:
    """Read a researcher's profile page: papers (newest first, 24 a page), author positions, fields,
    co-authors, institutions over time and external ids.

    Args:
        researcher_id: The researcher id that find_researcher or a page gave.
        category: Only papers with this primary arXiv category, e.g. cs.DC.
        page: Which page of papers, from 1.
    """
    found = researcher_page(deps.archive, researcher_id, max(1, page), category)
    if found is None:
        raise ToolError(f"no researcher with id {researcher_id}; use find_researcher to look one up by name")
    subtitle = f"{found.paper_count} paper{'s' if found.paper_count != 1 else ''}" + (
        f", {found.years}" if found.years else ""
    )
    cards = [_researcher_card(found.id, found.name, subtitle)]
    if found.network is not None:  # the page's drawing of their co-authors, opened as the page
        cards.append(Card(CardKind.GRAPH, str(found.id), found.network.label, f"{found.path}#network",
                          found.network.summary))  # fmt: skip
    return ToolResult(found.to_markdown(), cards, data=found)


def summarize_researcher(deps: ToolDeps, researcher_id: int) -> ToolResult:
    """Gather what a grounded summary of a researcher may say: their statistics here and their papers with the
    opening of each abstract, each paper numbered [n] for citation. Write the summary only from this, citing
    the papers each statement rests on; the first paragraph is already a summary with no claim beyond the data.

    Args:
        researcher_id: The researcher id that find_researcher or a page gave.
    """
    profile = deps.archive.researcher(researcher_id, per_page=SUMMARY_PAPERS)
    if profile is None:
        raise ToolError(f"no researcher with id {researcher_id}; use find_researcher to look one up by name")
    r = profile.researcher
    n = profile.paper_count
    facts = [f"{r.name} has {n} paper{'s' if n != 1 else ''} in this archive"]
    if profile.years[0]:
        facts[0] += f" ({_span(*profile.years)})"
    if profile.fields:
        facts.append("mostly in " + ", ".join(f"{c} ({k})" for c, k in profile.fields[:3]))
    if profile.institutions:
        facts.append("affiliated with " + ", ".join(a.name for a in profile.institutions[:3]))
    if profile.coauthors:
        facts.append("often writing with " + ", ".join(c.name for c in profile.coauthors[:3]))
    p = profile.positions
    if profile.matched_papers:
        roles = [f"{role} author on {p[role]}" for role in ("sole", "first", "middle", "last") if p[role]]
        matched = profile.matched_papers
        facts.append(
            f"{', '.join(roles)} of the {matched} paper{'s' if matched != 1 else ''} whose authors are all matched"
        )
    subtitle = f"{n} paper{'s' if n != 1 else ''}" + (f", {_span(*profile.years)}" if profile.years[0] else "")
    result = _summary_material(
        deps, "; ".join(facts) + ".", profile.papers.papers, r.name, researcher_path(r.id, r.name)
    )
    result.cards.insert(0, _researcher_card(r.id, r.name, subtitle))
    return result


def _summary_material(deps: ToolDeps, assembled: str, papers, name: str, path: str) -> ToolResult:
    lines = [
        f"{SUMMARY_HEAD}{md_escape(assembled)}",
        "",
        "Papers, newest first:",
    ]
    cards = []
    for paper in papers:
        number = deps.sources.number(paper)
        opening = paper.abstract[:400].rsplit(" ", 1)[0] + " …" if len(paper.abstract) > 400 else paper.abstract
        year = f" ({paper.year})" if paper.year else ""
        lines.append(Listed(number, f"{md_escape(paper.title)}{year}; page {deps.sources.entries[paper.id][2]}"))
        if opening:
            lines.append(f"    abstract: {md_escape(opening)}")
        page = deps.sources.entries[paper.id][2]
        cards.append(Card(CardKind.PAPER, paper.id, paper.title, page, year.strip(" ()"), number))
    lines += ["", f"Profile page: {path} ({md_escape(name)})"]
    listing = PaperListing(tuple(lines))
    return ToolResult(listing.to_markdown(), cards, data=ProfileSummary(assembled, name, path, listing))


def _institution_or_error(deps: ToolDeps, institution: str):
    found = deps.archive.find_institution(institution)
    if found.institution is None:
        near = "; ".join(f"{md_escape(i.name)} (id {i.id})" for i, _s in found.candidates[:5])
        raise ToolError(
            f"no institution matches {institution[:200]!r}" + (f"; the closest are: {near}" if near else "")
        )
    return found


def find_institution(deps: ToolDeps, institution: str) -> ToolResult:
    """Resolve an institution from its id, a ROR id or URL, an OpenAlex id, a name, an alias, an acronym, or a
    raw affiliation string such as "Dept. of EECS, UC Berkeley". Says plainly when nothing matches, with the
    closest candidates.

    Args:
        institution: What to resolve, e.g. "MIT", "https://ror.org/042nb2s44" or "Univ. of Toronto, Canada".
    """
    found = deps.archive.find_institution(institution)
    if found.institution is None:
        near = [f"- {md_escape(i.name)} (institution id {i.id}; score {s:.2f})" for i, s in found.candidates[:5]]
        text = f"Not found: no institution in this archive matches {md_escape(institution[:200])!r}."
        return ToolResult("\n".join([text, *(["Closest candidates:", *near] if near else [])]))
    i = found.institution
    place = ", ".join(x for x in (i.city, i.country_name) if x)
    lines = [
        f"{md_escape(i.name)} (institution id {i.id}; page {institution_path(i.id, i.name)}"
        + (f"; ROR {i.ror_id}" if i.ror_id else "")
        + f"){'; ' + md_escape(place) if place else ''}; matched by {found.how}."
    ]
    others = [f"{md_escape(c.name)} (id {c.id})" for c, _s in found.candidates[1:4]]
    if others:
        lines.append("Other candidates: " + "; ".join(others))
    card = Card(CardKind.INSTITUTION, str(i.id), i.name, institution_path(i.id, i.name), place)
    return ToolResult("\n".join(lines), [card])


def get_institution(deps: ToolDeps, institution: str, category: str | None = None, page: int = 1) -> ToolResult:
    """Read an institution's page: location, type, ROR link, parent and child institutions, researchers,
    fields and papers (newest first, 24 a page).

    Args:
        institution: Its id, ROR id, name or acronym (resolved as find_institution does).
        category: Only papers with this primary arXiv category.
        page: Which page of papers, from 1.
    """
    found = _institution_or_error(deps, institution)
    built = institution_page(deps.archive, found.institution.id, max(1, page), category)
    card = Card(CardKind.INSTITUTION, str(built.id), built.name, built.path, built.location)
    return ToolResult(built.to_markdown(), [card])


def summarize_institution(deps: ToolDeps, institution: str) -> ToolResult:
    """Gather what a grounded summary of an institution may say: its statistics here, its most active
    researchers and its newest papers with the opening of each abstract, numbered [n] for citation. Write
    the summary only from this; the first paragraph is already a summary with no claim beyond the data.

    Args:
        institution: Its id, ROR id, name or acronym.
    """
    found = _institution_or_error(deps, institution)
    profile = deps.archive.institution(found.institution.id, per_page=SUMMARY_PAPERS)
    i = profile.institution
    facts = [f"{i.name}" + (f" ({', '.join(x for x in (i.city, i.country_name) if x)})" if i.city else "")]
    facts[0] += f" has {profile.paper_count} papers and {profile.researcher_count} researchers in this archive"
    if profile.fields:
        facts.append("mostly in " + ", ".join(f"{c} ({k})" for c, k in profile.fields[:3]))
    if profile.researchers:
        facts.append("most active here: " + ", ".join(m.name for m in profile.researchers[:5]))
    if profile.parents:
        facts.append("part of " + ", ".join(p.name for p in profile.parents[:3]))
    return _summary_material(
        deps, "; ".join(facts) + ".", profile.papers.papers, i.name, institution_path(i.id, i.name)
    )
