"""Machine-readable addresses: the sitemap (one file up to `SITEMAP_LIMIT` URLs, past it an index of parts of
`SITEMAP_PART`), RSS feeds and llms.txt."""

from __future__ import annotations

from datetime import datetime, timezone
from email.utils import format_datetime
from xml.sax.saxutils import escape

from retrieval.archive import Archive
from retrieval.scholarly.listings import SitemapPart
from retrieval.scholarly.models import Paper, utc
from retrieval.scholarly.records import whole_number
from pages.base import SITE_NAME, TAGLINE, institution_path, paper_address, paper_path, researcher_path

SITEMAP_LIMIT = 10_000  # URLs in a sitemap of one file, at most
# URLs per part of a larger one, at most: sitemaps.org allows 50,000, but a part's time is in its size (a part of
# 10,000 papers deep in a million took 160 ms at p95 on PostgreSQL; BENCHMARKS.md)
SITEMAP_PART = 5_000
STATIC_PATHS = (
    "/", "/search", "/papers", "/researchers", "/institutions", "/about", "/privacy", "/developers", "/llms.txt"
)
FEED_ITEMS = 50
KINDS = ("papers", "researchers", "institutions")


def _entries(archive: Archive, kind: str, part: SitemapPart) -> list[tuple[str, datetime | None]]:
    """(path, last modified) of the indexable pages of a kind in one part."""
    path = {"papers": paper_address, "researchers": researcher_path, "institutions": institution_path}[kind]
    return [(path(key, name), modified) for key, name, modified in archive.sitemap_entries(kind, part)]


def _urlset(base_url: str, entries: list[tuple[str, datetime | None]]) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    for path, modified in entries:
        stamp = f"<lastmod>{modified.date().isoformat()}</lastmod>" if modified else ""
        lines.append(f"<url><loc>{escape(base_url + path)}</loc>{stamp}</url>")
    lines.append("</urlset>")
    return "\n".join(lines) + "\n"


def sitemap(archive: Archive, base_url: str, limit: int = SITEMAP_LIMIT, part: int = SITEMAP_PART) -> str:
    """Every indexable address in one urlset, or, past `limit` URLs, an index of parts of at most `part` each."""
    counts = {kind: archive.indexable_count(kind) for kind in KINDS}
    if len(STATIC_PATHS) + sum(counts.values()) <= limit:
        entries = [(p, None) for p in STATIC_PATHS]
        for kind in KINDS:
            for each in archive.sitemap_parts(kind, limit):
                entries += _entries(archive, kind, each)
        return _urlset(base_url, entries)
    parts = ["/sitemaps/pages.xml"]
    for kind in KINDS:
        parts += [f"/sitemaps/{kind}-{n}.xml" for n in range(1, len(archive.sitemap_parts(kind, part)) + 1)]
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ]
    lines += [f"<sitemap><loc>{escape(base_url + p)}</loc></sitemap>" for p in parts]
    lines.append("</sitemapindex>")
    return "\n".join(lines) + "\n"


def sitemap_part(archive: Archive, base_url: str, name: str, limit: int = SITEMAP_PART) -> str | None:
    """One part named in the index (of parts of at most `limit` URLs): pages.xml, or <kind>-<n>.xml."""
    if name == "pages.xml":
        return _urlset(base_url, [(p, None) for p in STATIC_PATHS])
    kind, _, number = name.removesuffix(".xml").rpartition("-")
    part = whole_number(number)
    if kind not in KINDS or part is None or part < 1:
        return None
    parts = archive.sitemap_parts(kind, limit)
    if part > len(parts):
        return None
    entries = _entries(archive, kind, parts[part - 1])
    return _urlset(base_url, entries) if entries else None


def rss(archive: Archive, base_url: str, category: str | None = None, items: int = FEED_ITEMS) -> str:
    """RSS 2.0: the newest papers, of one arXiv category if asked."""
    papers = archive.newest(category, items)
    title = f"{SITE_NAME}: newest papers" + (f" in {category}" if category else "")
    link = base_url + (f"/search?q=&category={category}" if category else "/")
    own = base_url + (f"/rss/{category}.xml" if category else "/rss/latest.xml")
    return rss_of(archive, base_url, papers, title, link, own)


def _plain(text: str) -> str:
    """Text for an RSS <description>: readers decode the XML and then render the result as HTML, so the text is
    escaped for HTML first and for XML second; `<img src=...>` in an abstract reaches the reader as text."""
    return escape(escape(text))


def rss_of(archive: Archive, base_url: str, papers: list[Paper], title: str, link: str, own_url: str) -> str:
    """An RSS 2.0 channel of these papers (newest first), each item linking to its page."""
    authors = archive.author_names([p.id for p in papers])
    now = format_datetime(datetime.now(timezone.utc))
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>',
        f"<title>{escape(title)}</title><link>{escape(link)}</link>",
        f"<description>{escape(TAGLINE)}</description><language>en</language><lastBuildDate>{now}</lastBuildDate>",
        f'<atom:link href="{escape(own_url)}" rel="self" type="application/rss+xml"/>',
    ]
    for paper in papers:
        url = base_url + paper_path(paper)
        names = ", ".join(authors.get(paper.id, [])[:10])
        summary = paper.abstract[:600] + ("…" if len(paper.abstract) > 600 else "")
        published = ""
        if paper.published:
            published = f"<pubDate>{format_datetime(utc(paper.published))}</pubDate>"
        lines.append(
            f"<item><title>{escape(paper.title)}</title><link>{escape(url)}</link>"
            f'<guid isPermaLink="true">{escape(url)}</guid>{published}'
            f"<description>{_plain((names + '. ' if names else '') + summary)}</description>"
            + "".join(f"<category>{escape(c)}</category>" for c in paper.categories)
            + "</item>"
        )
    lines.append("</channel></rss>")
    return "\n".join(lines) + "\n"


def llms_txt(archive: Archive, base_url: str) -> str:
    counts = archive.counts()
    return f"""# {SITE_NAME}

> {TAGLINE}. A self-hosted archive of research papers (arXiv metadata and full text), their researchers and
> institutions, with search and a chat that answers with citations. {counts["papers"]} papers,
> {counts["researchers"]} researchers and {counts["institutions"]} institutions are indexed here.

Every page is available as markdown: send `Accept: text/markdown`, or add `.md` to the address.

## Pages

- [Paper]({base_url}/papers/2006.07357): `/papers/<arXiv id>-<slug>` (the bare id, a version such as `2006.07357v2`
  and old-style ids such as `/papers/hep-th/9901001` redirect to it); OpenAlex-only works use `openalex:W<id>`.
- Researcher: `/researchers/<id>-<slug>`, with `?category=<arXiv category>` and `?page=<n>`.
- Institution: `/institutions/<id>-<slug>`; `/institutions/<ROR id>` and `/institutions/<name or acronym>` redirect.
- [Search]({base_url}/search?q=hindsight+logging): `/search?q=<words>`.
- Lists: [papers]({base_url}/papers) (newest first; `?category=<arXiv category>`, `?page=<n>`),
  [researchers]({base_url}/researchers), [institutions]({base_url}/institutions).
- [About]({base_url}/about), [Privacy]({base_url}/privacy), [Developers]({base_url}/developers).

## Machine-readable

- [JSON API, described by OpenAPI]({base_url}/openapi.json): `/api/papers/<id>`, `/api/researchers/<id>`,
  `/api/institutions/<id, ROR id or name>`, `/api/search?q=<words>`.
- [Sitemap]({base_url}/sitemap.xml), [newest papers as RSS]({base_url}/rss/latest.xml) (per category:
  `/rss/<category>.xml`, e.g. `/rss/cs.LG.xml`).

## Data

Paper metadata from arXiv (CC0; not affiliated with arXiv); researcher and institution data from OpenAlex (CC0),
Semantic Scholar (ODC-BY) and ROR (CC0).
"""
