"""Records -> catalog, with the ledger committed with them; every step resumable. Embedding and indexing are in
`ingest.indexing`."""

from __future__ import annotations

import hashlib
import logging
import uuid

from ingest.report import Failure, Summary
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.citation_edges import resolve_citation_edges
from retrieval.scholarly.identity import KnownNames, refine_researchers, upsert_researcher
from retrieval.scholarly.models import LedgerEntry
from retrieval.scholarly.records import InstitutionRecord, PaperRecord, ResearcherRecord
from retrieval.scholarly.upsert import upsert_institution, upsert_paper
from retrieval.upkeep.database import hold_write_lock

log = logging.getLogger(__name__)
Record = PaperRecord | InstitutionRecord | ResearcherRecord
COMMIT_EVERY = 200
# The ledger's note of the cross-record work `finish_catalog` owes: "done", or a token written with the records that
# owe it (a new one each time records are written, so a finish marks done only the writes it saw).
FINISH = ("finish", "catalog")
RELINK = "relink"  # the note a revision leaves for a finish that reads every unlinked citation edge again


class NullProgress:
    """Stands in for rich.progress.Progress when nobody watches."""

    def add_task(self, description: str, total: float | None = None) -> int:
        return 0

    def advance(self, task: int, advance: float = 1) -> None:
        pass

    def update(self, task: int, **fields) -> None:
        pass


def record_key(record: Record) -> str:
    if isinstance(record, PaperRecord):
        return record.id
    if isinstance(record, InstitutionRecord):
        return record.ror_id or record.openalex_id or record.name
    return record.openalex_id or record.orcid or record.name


def _write(session, record: Record, known: KnownNames) -> None:
    if isinstance(record, PaperRecord):
        upsert_paper(session, record, known)
    elif isinstance(record, InstitutionRecord):
        upsert_institution(session, record)
    else:
        upsert_researcher(session, record)
        known.valid = False  # a researcher renamed or made outside the batch's reckoning: names are queried again


def _grouped(outcomes: list[Record | Failure], summary: Summary) -> dict[str, list[Record]]:
    """The records by key, in their order (a key's records are written together); the failures go to `summary`."""
    grouped: dict[str, list[Record]] = {}
    for item in outcomes:
        if isinstance(item, Failure):
            summary.fail(item)
        else:
            grouped.setdefault(record_key(item), []).append(item)
    return grouped


def load_records(
    catalog: Catalog,
    stage: str,
    outcomes: list[Record | Failure],
    summary: Summary,
    progress=None,
    cursors: dict[str, dict | None] | None = None,
) -> None:
    """Write records not seen before (or changed) and mark them in the ledger in the same commit.

    Records sharing a key within one stage are written together, in order, under one combined digest,
    so a rerun finds them unchanged. `cursors` (harvest positions, see `Catalog.save_cursor`) are saved in
    the last commit, so a harvest never moves past a page whose records are not stored.
    """
    progress = progress or NullProgress()
    task = progress.add_task(stage, total=len(outcomes))
    grouped = _grouped(outcomes, summary)
    progress.advance(task, len(outcomes) - sum(map(len, grouped.values())))
    seen = catalog.ledger_hashes(stage, grouped)  # only this call's keys: a stage may hold millions
    digests = {key: hashlib.sha256("".join(r.content_hash() for r in records).encode()).hexdigest()
               for key, records in grouped.items()}  # fmt: skip
    changed = [key for key in grouped if seen.get(key) != digests[key]]
    written, known = 0, None
    with catalog.session() as session:
        for key, records in grouped.items():
            progress.advance(task, len(records))
            digest = digests[key]
            if seen.get(key) == digest:
                summary.add("unchanged")
                continue
            try:
                hold_write_lock(session)  # before anything is read: SQLite's write lock, then the batch's reads
                if known is None:  # the researchers the authors of this transaction's records may be, read at once
                    known = KnownNames.read(session, ([a.name for a in r.authors] for k in changed[written:]
                                                      for r in grouped[k] if isinstance(r, PaperRecord)))  # fmt: skip
                with session.begin_nested():
                    for record in records:
                        _write(session, record, known)
                    Catalog.mark(session, stage, key, digest, new=key not in seen)
            except Exception as exc:  # one bad record is reported and skipped; the run goes on
                if known is not None:  # what the batch noted of the record's researchers was rolled back with it
                    known.valid = False
                log.warning("record %s of %s not stored", key, stage, exc_info=True)
                summary.fail(Failure(stage, key, f"could not be stored: {type(exc).__name__}: {str(exc)[:300]}"))
                changed.remove(key)
                continue
            summary.add("updated" if key in seen else "added")
            written += 1
            if written == 1:
                owe_finish(session)
            if written % COMMIT_EVERY == 0:
                session.commit()
                known = None  # another writer may come between two transactions: the next one reads again
        for name, state in (cursors or {}).items():
            Catalog.save_cursor(session, name, state)
        session.commit()


def owe_finish(session) -> None:
    """Note, in the caller's transaction (with the records it writes), that `finish_catalog` has work to do (a
    relink a revision asked for stays asked)."""
    entry = session.get(LedgerEntry, FINISH)
    relink = entry is not None and entry.content_hash.startswith(RELINK)
    Catalog.mark(session, *FINISH, f"{RELINK if relink else 'owed'}:{uuid.uuid4().hex}")


def finish_catalog(catalog: Catalog) -> int:
    """Cross-record work after loading: name-only authorships relinked to identified researchers where the evidence
    allows. Returns the citation edges changed.

    Citation edges are linked as records are written (`upsert_paper`: a paper's own edges, and the edges waiting for
    it); every unlinked edge is read again only on an archive whose ledger never said (made before the note) or
    asks for it (`RELINK`, which a revision that changes how edges match writes).

    Skipped when no record changed since the last finish (a rerun of the demo that changed nothing: 4.1 -> 1.8 s);
    done when the ledger owes it, and on an archive whose ledger never said (made before the note)."""
    owed = catalog.ledger_hashes(FINISH[0]).get(FINISH[1])
    if owed == "done":
        return 0
    with catalog.session() as session:
        changed = resolve_citation_edges(session) if owed is None or owed.startswith(RELINK) else 0
        refine_researchers(session)
        entry = session.get(LedgerEntry, FINISH)
        if entry is None:
            session.add(LedgerEntry(stage=FINISH[0], key=FINISH[1], content_hash="done"))
        elif entry.content_hash == owed:  # a write noted after this finish began keeps its note for the next one
            entry.content_hash = "done"
            session.add(entry)
        session.commit()
    return changed
