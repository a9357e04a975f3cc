"""Saved questions re-run (`retrieval.library.watches`): the `watches` job, queued after every job that brings papers
(`FOLLOW_UPS`, read by `jobs.runner.JobRunner`) and on a user's demand.

A run is the archive's own search for the question within its scope, keeping the papers that clear the relevance
floor (`retrieval.search.relevance`); those not seen before make a change, with the sentences that matched. Its cost
is one search per question (the index answers a query in about the same time whatever the archive's size), so
re-running N questions costs N searches, not a scan of what the update brought.
"""

from __future__ import annotations

from dataclasses import replace

from ingest.report import Summary
from jobs.context import JobContext
from retrieval.archive import Archive
from retrieval.library.watches import Digests, QuestionChange, SavedQuestion, Watches
from retrieval.vectors.index import Filters

WATCHES_KIND = "watches"
SHOWN = 10  # answers weighed per run
# The kinds of job that bring papers or passages: each, done, queues one `watches` run (shared while it waits): of
# every saved question for public papers, of the asker's own for what only they can see (their PDFs, their Zotero).
BRINGS_PAPERS = ("demo", "pdfs", "arxiv", "update", "snapshot", "paper", "references")
BRINGS_OWN = ("upload", "zotero")
FOLLOW_UPS = {**{kind: (WATCHES_KIND, False) for kind in BRINGS_PAPERS},
              **{kind: (WATCHES_KIND, True) for kind in BRINGS_OWN}}  # fmt: skip


def scope_filters(question: SavedQuestion, library_ids) -> Filters:
    """What the question searches: the archive (with its owner's uploads), one category, or the owner's papers."""
    filters = Filters(viewer=question.owner)
    if question.scope.startswith("category:"):
        return replace(filters, categories=(question.scope.split(":", 1)[1],))
    if question.scope == "mine":
        return replace(filters, paper_ids=tuple(library_ids(question.owner)) or ("none",))
    return filters


def answers(archive: Archive, question: SavedQuestion, library_ids) -> list[dict]:
    """The papers that answer the question now (clearing the floor), best first, with the sentences that matched."""
    result = archive.search(question.query, scope_filters(question, library_ids), limit=SHOWN, sentences=2)
    return [{"id": h.paper.id, "title": h.paper.title, "quotes": list(h.sentences), "page": h.page,
             "version": h.paper.version} for h in result.hits if h.clears]  # fmt: skip


def _same(text: str) -> str:
    return " ".join(text.split()).lower()


def check_quote(archive: Archive, paper, quote: str, page: int | None) -> str:
    """Whether what a paper was quoted for is still in its new version: "kept", "moved to p. N" or "gone" (an
    abstract sentence is looked for in the new abstract, a passage among the paper's passages)."""
    if page is None:
        return "kept" if _same(quote) in _same(paper.abstract) else "gone"
    for hit in archive.passages(quote, Filters(paper_ids=(paper.id,)), limit=5).hits:
        if _same(quote) in _same(hit.text):
            return "kept" if hit.page == page else f"moved to p. {hit.page}"
    return "gone"


def revisions(archive: Archive, question: SavedQuestion) -> list[dict]:
    """The papers that answered the question and have come in a newer arXiv version since, each with what it was
    quoted for checked against the new text."""
    known = {pid: c for pid, c in question.cited.items() if isinstance(c.get("version"), int)}
    papers = archive.papers(list(known)) if known else {}
    found = []
    for pid, cited in known.items():
        paper = papers.get(pid)
        if paper is None or not paper.version or paper.version <= cited["version"]:
            continue
        checked = [{"text": q, "state": check_quote(archive, paper, q, cited.get("page"))} for q in cited["quotes"]]
        found.append({"kind": "version", "id": pid, "title": paper.title, "version": paper.version,
                      "was": cited["version"], "quotes": [], "checked": checked})  # fmt: skip
    return found


def rerun(archive: Archive, watches: Watches, question: SavedQuestion, library_ids) -> QuestionChange | None:
    """One run of a question: a change when papers that were not answers before are now, or when a paper that was
    one came in a new version."""
    seen = set(question.seen)
    new = [p for p in answers(archive, question, library_ids) if p["id"] not in seen]
    return watches.record(question, new, revisions(archive, question))


def run_watches(ctx: JobContext, args: dict, summary: Summary, progress) -> str:
    """Every saved question, or one user's (`args`: owner), or one (owner and question), re-run."""
    archive = Archive(ctx.writer.catalog, ctx.writer.index, ctx.writer.embedder)
    watches = Watches(ctx.writer.catalog.engine)
    if "question" in args:
        questions = [q for q in [watches.get(args.get("owner"), int(args["question"]))] if q is not None]
    elif "owner" in args:
        questions = watches.of(str(args["owner"]))
    else:
        questions = watches.every()
    task = progress.add_task("saved questions", total=len(questions))
    changed = 0
    for question in questions:
        if rerun(archive, watches, question, ctx.uploads.library_ids) is not None:
            changed += 1
        progress.advance(task)
    summary.add("questions run", len(questions))
    summary.add("with news", changed)
    note = f"{len(questions)} saved question{'s' if len(questions) != 1 else ''} run, {changed} with news"
    if ctx.post is not None:  # the e-mail digests that are due (each at most once a day or a week)
        mailed = ctx.post.deliver(Digests(ctx.writer.catalog.engine))
        summary.add("digests mailed", mailed)
        note += f", {mailed} digest{'s' if mailed != 1 else ''} mailed"
    return note
