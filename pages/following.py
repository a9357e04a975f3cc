"""/me/following: the researchers a signed-in user follows and their newest papers (never indexed)."""

from __future__ import annotations

from dataclasses import dataclass

from pages.base import PageMeta, feed_path, md_escape, researcher_path
from pages.people import CountedLink, PaperItem, paper_items, paper_lines
from retrieval.archive import Archive


@dataclass(frozen=True)
class FollowingPage:
    """A signed-in user's followed researchers and their newest papers; never indexed."""

    researchers: list[CountedLink]
    papers: list[PaperItem]
    feed_path: str
    path: str = "/me/following"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(title="Following", description="Researchers you follow.", path=self.path, noindex=True)

    def to_markdown(self) -> str:
        lines = ["# Following", ""]
        if not self.researchers:
            lines.append("You follow no researcher yet: use the Follow button on a researcher's page.")
        lines += [
            f"- [{md_escape(r.label)}]({r.href}): {r.count} paper{'s' if r.count != 1 else ''}"
            for r in self.researchers
        ]
        lines += [
            "",
            f"Private RSS feed (keep the address to yourself): {self.feed_path}",
            "",
            "## Their newest papers",
            "",
        ]
        lines += paper_lines(self.papers)
        return "\n".join(lines) + "\n"


def following_page(archive: Archive, researcher_ids: list[int], feed_key: str) -> FollowingPage:
    people = archive.researchers_by_ids(researcher_ids)
    counts = archive.paper_counts(list(people))
    researchers = [
        CountedLink(people[r].name, counts[r], researcher_path(r, people[r].name))
        for r in researcher_ids if r in people
    ]
    papers = paper_items(archive.newest_papers_of(list(people), limit=30))
    return FollowingPage(researchers, papers, feed_path(feed_key))
