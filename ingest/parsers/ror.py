"""ROR registry records, schema v2 and the older v1, one JSON object a line."""

from __future__ import annotations

from collections.abc import Iterator

from ingest.parsers.common import parse_json_lines
from ingest.parsers.openalex import short_id
from ingest.report import Failure
from retrieval.scholarly.records import InstitutionRecord

SOURCE = "ror"


def parse_ror_lines(lines: Iterator[str], source: str = SOURCE) -> Iterator[InstitutionRecord | Failure]:
    """ROR records one per line, in schema v2 or v1 (told apart by v2's `names`)."""
    return parse_json_lines(
        lines, source, lambda raw: short_id(raw.get("id")), lambda raw: (_v2 if "names" in raw else _v1)(raw, source)
    )


def _relations(raw: dict, kind: str) -> list[str]:
    return [
        short_id(r["id"]) for r in raw.get("relationships") or [] if r.get("type", "").lower() == kind and r.get("id")
    ]


def _v2(raw: dict, source: str) -> InstitutionRecord:
    names = raw["names"]
    display = next(n["value"] for n in names if "ror_display" in n["types"])
    location = (raw.get("locations") or [{}])[0].get("geonames_details") or {}
    website = next((link["value"] for link in raw.get("links") or [] if link.get("type") == "website"), None)
    return InstitutionRecord(
        name=display,
        ror_id=short_id(raw["id"]),
        aliases=[n["value"] for n in names if n["value"] != display and {"alias", "label"} & set(n["types"])],
        acronyms=[n["value"] for n in names if "acronym" in n["types"]],
        country_code=location.get("country_code"),
        country_name=location.get("country_name"),
        city=location.get("name"),
        types=[t.lower() for t in raw.get("types") or []],
        established=raw.get("established"),
        website=website,
        parent_rors=_relations(raw, "parent"),
        child_rors=_relations(raw, "child"),
        source=source,
    )


def _v1(raw: dict, source: str) -> InstitutionRecord:
    country = raw.get("country") or {}
    address = (raw.get("addresses") or [{}])[0]
    return InstitutionRecord(
        name=raw["name"],
        ror_id=short_id(raw["id"]),
        aliases=[*(raw.get("aliases") or []), *(label["label"] for label in raw.get("labels") or [])],
        acronyms=raw.get("acronyms") or [],
        country_code=country.get("country_code"),
        country_name=country.get("country_name"),
        city=address.get("city"),
        types=[t.lower() for t in raw.get("types") or []],
        established=raw.get("established"),
        website=(raw.get("links") or [None])[0],
        parent_rors=_relations(raw, "parent"),
        child_rors=_relations(raw, "child"),
        source=source,
    )
