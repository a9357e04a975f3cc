"""What every page shares: links, escaping, the site's name, and the addresses of its pages (slugs, canonical
paths, and parsing what a visitor typed): every link the product builds to one of its own pages is written here (the
routes that answer them are in `web/routes.py`, `web/library*.py`, `web/api.py`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from retrieval.library.visible import upload_number
from retrieval.scholarly.models import Paper
from retrieval.scholarly.arxiv_ids import ARXIV_ID

SITE_NAME = "ScholarLoom"
TAGLINE = "Papers, researchers and institutions, woven together"


@dataclass(frozen=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True)
class PageMeta:
    """Head data of a page: title, description, canonical path, structured data."""

    title: str
    description: str
    path: str
    json_ld: list[dict] = field(default_factory=list)
    noindex: bool = False
    refresh_seconds: int | None = None  # reload the page (a job's progress, without script)


def breadcrumbs(base_url: str, *crumbs: Link) -> dict:
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": n, "name": c.label, "item": base_url + c.href}
            for n, c in enumerate(crumbs, start=1)
        ],
    }


def md_escape(text: str) -> str:
    """Keep untrusted text from forming links, images or HTML when markdown is rendered."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("<", "&lt;").replace(">", "&gt;")


def byline(names: list[str], shown: int = 3) -> str:
    """Authors as a listing shows them: the first few, then "et al."."""
    return ", ".join(names[:shown]) + (" et al." if len(names) > shown else "")


def figure(count: int) -> str:
    """A count for people: 1742 -> '1,742'."""
    return f"{count:,}"


# --- addresses ------------------------------------------------------------------------------------------

_ID_AT_START = re.compile(rf"^(?P<id>{ARXIV_ID}|openalex:W\d+)(?P<version>v\d+)?(?P<rest>.*)$")


def slugify(text: str, max_words: int = 8) -> str:
    """'Hindsight Logging for Model Training' -> 'hindsight-logging-for-model-training'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words[:max_words])


LIBRARY = "/me/library"  # the signed-in user's own papers and uploads


def upload_path(upload_id: int) -> str:
    return f"{LIBRARY}/{int(upload_id)}"


def paper_path(paper: Paper) -> str:
    return paper_address(paper.id, paper.title)


def paper_address(paper_id: str, title: str) -> str:
    """A paper's page from its id and title (what `paper_path` reads of a paper)."""
    if (number := upload_number(paper_id)) is not None:  # a user's own upload: its private page
        return upload_path(number)
    slug = slugify(title)
    return "/papers/" + quote(paper_id, safe="/:") + (f"-{slug}" if slug else "")


def external(base: str, identifier: str) -> str:
    """A scholarly site's address for an identifier from the data, which may hold anything: percent-encoded
    so it stays one URL (no spaces, brackets or parentheses to break out of a markdown link)."""
    return base + quote(identifier, safe="/:.;-_~")


def split_paper_address(address: str) -> tuple[str, str | None, str] | None:
    """'2006.07357v2-hindsight' -> ('2006.07357', 'v2', '-hindsight'); None when no id is recognised."""
    match = _ID_AT_START.match(address)
    if not match:
        return None
    return match.group("id"), match.group("version"), match.group("rest")


def researcher_path(researcher_id: int, name: str) -> str:
    slug = slugify(name)
    return f"/researchers/{researcher_id}" + (f"-{slug}" if slug else "")


def institution_path(institution_id: int, name: str) -> str:
    slug = slugify(name)
    return f"/institutions/{institution_id}" + (f"-{slug}" if slug else "")


def citation_path(paper_id: str, form: str) -> str:
    """A paper's citation as a file: `bib` (BibTeX), `ris` or `json` (CSL-JSON)."""
    return "/papers/" + quote(paper_id, safe=":/") + f".{form}"


def citations_path(paper_ids: list[str]) -> str:
    """Several papers' BibTeX in one file."""
    return "/cite.bib?" + urlencode({"ids": ",".join(paper_ids)})


def chat_path(**about: str | int) -> str:
    """The chat opened about something: `paper=<id>`, `researcher=<id>`, `institution=<id>` or `library="mine"`."""
    (kind, value), = about.items()
    return f"/chat?{kind}=" + quote(str(value), safe=":")


def thread_path(thread_id: str) -> str:
    """One of the signed-in user's chat threads."""
    return "/me/threads/" + quote(thread_id, safe="")


def feed_path(key: str) -> str:
    """The private feed of the researchers a user follows (its key is the credential)."""
    return f"/me/feed.xml?key={quote(key)}"


def request_path(job_id: int, signature: str | None = None) -> str:
    """A paper requested from arXiv: its job's page (`?for=` lets another asker of the same paper see it)."""
    return f"/papers/requests/{int(job_id)}" + (f"?for={signature}" if signature else "")  # (a signature is URL-safe)
