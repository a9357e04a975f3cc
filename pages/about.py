"""About, Privacy and Developers: pages of text (ours, not from papers), built once from sections."""

from __future__ import annotations

from dataclasses import dataclass

from pages.base import SITE_NAME, TAGLINE, Link, PageMeta, breadcrumbs


@dataclass(frozen=True)
class Section:
    heading: str
    paragraphs: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()  # each shown with its address, so a reader sees where it goes


@dataclass(frozen=True)
class TextPage:
    title: str
    path: str
    description: str
    sections: tuple[Section, ...]

    def meta(self, base_url: str) -> PageMeta:
        crumbs = breadcrumbs(base_url, Link(SITE_NAME, "/"), Link(self.title, self.path))
        return PageMeta(title=self.title, description=self.description, path=self.path, json_ld=[crumbs])

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", self.description]
        for section in self.sections:
            lines += ["", f"## {section.heading}", ""]
            lines += [p + "\n" for p in section.paragraphs]
            lines += [f"- [{link.label}]({link.href}): `{link.href}`" for link in section.links]
        return "\n".join(lines).rstrip() + "\n"


ABOUT = TextPage(
    "About",
    "/about",
    f"{SITE_NAME}: {TAGLINE.lower()}. An open-source, self-hostable archive of research papers with search, "
    "browsing pages and a chat that answers with citations.",
    (
        Section("What is here", (
            "Papers from arXiv (metadata, and full text where the PDF has been read), the researchers who wrote "
            "them and the institutions they were at. Search finds papers by meaning and by words, and a query that "
            "names a researcher lists their papers first. Every paper, researcher and institution has a page.",
            "The chat (for signed-in users) answers questions about the papers by searching this archive and "
            "reading its pages; each answer cites the papers it used, linked to their pages. Without a language "
            "model configured, it answers with what the search found, and says so.",
        )),
        Section("Where the data comes from", (
            "Paper metadata from arXiv (CC0; not affiliated with arXiv). Researcher and institution data from "
            "OpenAlex (CC0), Semantic Scholar (ODC-BY) and ROR (CC0). Full text from the papers' PDFs, shown in "
            "short passages with their page numbers.",
        ), (Link("arXiv", "https://arxiv.org/"), Link("OpenAlex", "https://openalex.org/"),
            Link("Semantic Scholar", "https://www.semanticscholar.org/"), Link("ROR", "https://ror.org/"))),
        Section("Run your own", (
            f"{SITE_NAME} is open source and runs on one machine: `make demo` sets up a demo archive and serves it. "
            "See the Developers page for the API and the machine-readable views of every page.",
        ), (Link("Developers", "/developers"), Link("Privacy", "/privacy"))),
    ),
)

PRIVACY = TextPage(
    "Privacy",
    "/privacy",
    "What this server keeps about you, and what it sends elsewhere.",
    (
        Section("Browsing", (
            "Reading the pages needs no account and sets no cookie (signing in sets one, for the session), and the "
            "pages load nothing from other sites: no analytics, no trackers, no fonts or scripts from elsewhere. "
            "The server's access log may keep addresses and pages asked for, as its operator configures it.",
        )),
        Section("An account", (
            "Your user name, a salted hash of your password (never the password itself), whether you are an admin, "
            "the researchers and institutions you follow, and your chat conversations with the files you attached. "
            "Conversations are yours: no other user can open, resume or delete them. Failed sign-ins are counted "
            "per user name and per address to slow down guessing, and forgotten a day after the last failure.",
            "Signing out everywhere (on your Following page) ends every session you have.",
        ), (Link("Following", "/me/following"),)),
        Section("The language model", (
            "When the operator has configured a language model, your chat questions and the archive's text that "
            "answers them go to that model's provider (or to a model running on the operator's own machine), under "
            "the operator's agreement with it. Without one, nothing leaves this server.",
        )),
    ),
)

DEVELOPERS = TextPage(
    "Developers",
    "/developers",
    "Everything on this site is readable by programs: a JSON API, markdown versions of every page, feeds and a "
    "sitemap. No key is needed to read.",
    (
        Section("JSON API", (
            "Papers, researchers, institutions, search (a researcher's name finds their papers first) and "
            "full-text passages with their pages, described by OpenAPI.",
        ), (Link("OpenAPI description", "/openapi.json"), Link("Search", "/api/search?q=hindsight+logging"),
            Link("A paper", "/api/papers/2006.07357"))),
        Section("Markdown", (
            "Every page is also markdown: send `Accept: text/markdown`, or add `.md` to a paper's, researcher's or "
            "institution's address. This is what the chat's tools read.",
        ), (Link("A guide for language models", "/llms.txt"),)),
        Section("Feeds and sitemap", (
            "The newest papers as RSS, for the whole archive or one arXiv category (`/rss/<category>.xml`); "
            "signed-in users also get a private feed of the people and places they follow.",
        ), (Link("Newest papers (RSS)", "/rss/latest.xml"), Link("Sitemap", "/sitemap.xml"))),
    ),
)

TEXT_PAGES = {page.path: page for page in (ABOUT, PRIVACY, DEVELOPERS)}
