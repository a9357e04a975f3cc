"""Answers of the arXiv API to `id_list` requests, cut from a real recorded response page: the entry of the paper
asked for (or none) under the page's own feed header. PDFs for on-demand papers are stand-ins: one of the demo's
CC BY papers served at arxiv.org/pdf/<id> (no recorded PDF of these papers exists)."""

from __future__ import annotations

from xml.etree import ElementTree

from ingest.demo import DEMO_DIR

RECORDED_PAGE = DEMO_DIR / "arxiv_api_atom" / "query_cs_start000_max100.xml"
ATOM = "{http://www.w3.org/2005/Atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ASKED = "2512.13690"  # the page's first entry: real metadata, not in a fresh archive
ALSO_ASKED = "2512.13689"  # its second, for a second test on the same server
THIRD_ASKED = "2512.13687"  # its third, for a third (a reference list's paper fetched from the chat)
STAND_IN_PDF = DEMO_DIR / "pdfs" / "2006.12719.pdf"
OPENALEX_NOTHING = DEMO_DIR / "openalex" / "api_cassettes" / "works_cursor_last_page_empty.json"


def id_list_answer(arxiv_id: str | None) -> bytes:
    """The recorded page with only `arxiv_id`'s entry left (none for None), its total set to match."""
    root = ElementTree.fromstring(RECORDED_PAGE.read_bytes())
    kept = 0
    for entry in root.findall(f"{ATOM}entry"):
        if arxiv_id and (entry.findtext(f"{ATOM}id") or "").rsplit("/", 1)[-1].startswith(arxiv_id + "v"):
            kept += 1
        else:
            root.remove(entry)
    root.find(f"{OPENSEARCH}totalResults").text = str(kept)
    return ElementTree.tostring(root, xml_declaration=True, encoding="utf-8")


def recorded_routes(replay, arxiv_id: str = ASKED, *more: str, pdf=STAND_IN_PDF):
    """arXiv knows `arxiv_id` and `more` (each an entry of the recorded page, and nothing else), OpenAlex knows
    nothing, arxiv.org serves the stand-in PDF (`pdf`) for each."""
    for known_id in (arxiv_id, *more):
        known = lambda request, known_id=known_id: request.url.params.get("id_list") == known_id  # noqa: E731
        replay.add("GET", "export.arxiv.org", "/api/query", id_list_answer(known_id), when=known)
    replay.add("GET", "export.arxiv.org", "/api/query", id_list_answer(None))
    replay.add("GET", "api.openalex.org", "/works", OPENALEX_NOTHING)
    for known_id in (arxiv_id, *more):
        replay.add("GET", "arxiv.org", f"/pdf/{known_id}", pdf)
    return replay
