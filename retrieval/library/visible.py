"""What a viewer may see as papers: the public catalog's, and their own uploads. A paper id `upload:<n>` names an
upload (`upload_number`); search results turn it into a `Paper` only here, and only for its owner (`upload_papers`)."""

from __future__ import annotations

from sqlmodel import Session, select

from retrieval.library.uploads import PREFIX, Upload
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper


def upload_number(paper_id: str) -> int | None:
    """The upload's row id in `upload:<id>`, else None."""
    if not paper_id.startswith(PREFIX):
        return None
    digits = paper_id[len(PREFIX) :]
    return int(digits) if digits.isdigit() and len(digits) < 18 else None


def as_paper(upload: Upload) -> Paper:
    """The upload as a search hit's paper (never stored as one)."""
    return Paper(id=upload.point_paper_id, title=upload.title or upload.filename, abstract=upload.abstract,
                 published=upload.created_at, doi=upload.doi, sources=["upload"])  # fmt: skip


def upload_papers(session: Session, ids: list[str], viewer: str | None) -> dict[str, Paper]:
    """The uploads among `ids` that `viewer` owns, as papers; nothing for anyone else."""
    numbers = [n for n in map(upload_number, ids) if n is not None]
    if not viewer or not numbers:
        return {}
    rows = session.exec(select(Upload).where(Upload.id.in_(numbers), Upload.owner == viewer)).all()
    return {row.point_paper_id: as_paper(row) for row in rows}


def visible_papers(catalog: Catalog, ids: list[str], viewer: str | None) -> dict[str, Paper]:
    """Public papers by id and, for a `viewer`, that user's own uploads among the ids (in one session)."""
    if not ids:
        return {}
    with catalog.session() as session:
        found = catalog.papers_in(session, ids)
        return found | upload_papers(session, ids, viewer) if viewer else found
