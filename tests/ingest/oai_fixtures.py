"""OAI-PMH ListRecords pages for tests.

No recorded OAI-PMH response is available here, so these pages are BUILT, from real arXiv records (the
Kaggle snapshot head in data/demo/arxiv_metadata, CC0), in the documented formats: OAI-PMH 2.0
(http://www.openarchives.org/OAI/openarchivesprotocol.html, ListRecords, resumptionToken with cursor and
completeListSize, error codes) and arXiv's `arXiv` and `arXivRaw` metadata schemas
(https://arxiv.org/OAI/arXiv.xsd, https://arxiv.org/OAI/arXivRaw.xsd).
"""

from __future__ import annotations

import json
from email.utils import parsedate_to_datetime
from xml.sax.saxutils import escape, quoteattr

from ingest.demo import DEMO_DIR

SNAPSHOT = DEMO_DIR / "arxiv_metadata" / "arxiv-metadata-oai-snapshot.head200.jsonl"
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'


def real_records(count: int) -> list[dict]:
    with SNAPSHOT.open(encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(count), handle, strict=False)]


def _day(created: str) -> str:
    return parsedate_to_datetime(created).date().isoformat()


def _optional(tag: str, value) -> str:
    return f"<{tag}>{escape(value)}</{tag}>" if value else ""


def arxiv_metadata(raw: dict) -> str:
    authors = "".join(
        "<author>"
        + f"<keyname>{escape(last)}</keyname>"
        + _optional("forenames", first)
        + _optional("suffix", rest[0] if rest else "")
        + "</author>"
        for last, first, *rest in raw["authors_parsed"]
    )
    versions = raw["versions"]
    updated = f"<updated>{_day(versions[-1]['created'])}</updated>" if len(versions) > 1 else ""
    return (
        '<arXiv xmlns="http://arxiv.org/OAI/arXiv/">'
        f"<id>{escape(raw['id'])}</id><created>{_day(versions[0]['created'])}</created>{updated}"
        f"<authors>{authors}</authors><title>{escape(raw['title'])}</title>"
        f"<categories>{escape(raw['categories'])}</categories>"
        + _optional("comments", raw.get("comments"))
        + _optional("journal-ref", raw.get("journal-ref"))
        + _optional("doi", raw.get("doi"))
        + _optional("license", raw.get("license"))
        + f"<abstract>{escape(raw['abstract'])}</abstract></arXiv>"
    )


def arxiv_raw_metadata(raw: dict) -> str:
    versions = "".join(
        f'<version version="{v["version"]}"><date>{escape(v["created"])}</date><size>1kb</size></version>'
        for v in raw["versions"]
    )
    return (
        '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">'
        f"<id>{escape(raw['id'])}</id><submitter>{escape(raw.get('submitter') or '')}</submitter>{versions}"
        f"<title>{escape(raw['title'])}</title><authors>{escape(raw['authors'])}</authors>"
        f"<categories>{escape(raw['categories'])}</categories>"
        + _optional("doi", raw.get("doi"))
        + f"<abstract>{escape(raw['abstract'])}</abstract></arXivRaw>"
    )


def record(raw: dict, prefix: str = "arXiv", deleted: bool = False) -> str:
    datestamp = raw.get("update_date") or _day(raw["versions"][-1]["created"])
    status = ' status="deleted"' if deleted else ""
    header = (
        f"<header{status}><identifier>oai:arXiv.org:{escape(raw['id'])}</identifier>"
        f"<datestamp>{datestamp}</datestamp><setSpec>physics:hep-ph</setSpec></header>"
    )
    if deleted:
        return f"<record>{header}</record>"
    body = arxiv_metadata(raw) if prefix == "arXiv" else arxiv_raw_metadata(raw)
    return f"<record>{header}<metadata>{body}</metadata></record>"


def list_records(records: list[str], token: str | None, cursor: int, size: int) -> bytes:
    resumption = f"<resumptionToken cursor={quoteattr(str(cursor))} completeListSize={quoteattr(str(size))}>"
    resumption += f"{escape(token or '')}</resumptionToken>"
    return (
        f"{HEAD}<responseDate>2026-11-30T10:00:00Z</responseDate>"
        f'<request verb="ListRecords">https://oaipmh.arxiv.org/oai</request>'
        f"<ListRecords>{''.join(records)}{resumption}</ListRecords></OAI-PMH>"
    ).encode()


def error(code: str, message: str) -> bytes:
    return (
        f"{HEAD}<responseDate>2026-11-30T10:00:00Z</responseDate>"
        f'<request verb="ListRecords">https://oaipmh.arxiv.org/oai</request>'
        f"<error code={quoteattr(code)}>{escape(message)}</error></OAI-PMH>"
    ).encode()
