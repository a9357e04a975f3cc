"""The one composer of answers: every `Answer` is built here, whoever answered (a model with tools, the pipeline,
search alone, a card's button), and here alone a reply's [n] are read.

The conversation's sources number the papers (`SourceBook`); the tools' cards carry what was shown of each (a
sentence of its abstract, a passage with its page). A model's reply is read once for its [n] and [n, p. 7]
(`CITATION`, `link_numbers`): each linked to its paper's page, the papers it cited listed under it. What search
alone answers is written from the tools' typed data, its [n] linked as it is written (`linked_listing`,
`compare_table`), never read back out of markdown. Each answer keeps the evidence behind its [n]
(`Answer.evidence`: what its tools showed of each cited paper, whole), which the conversation stores with it. A
model's reply comes with the check of its cited sentences (`assistant.claim_check`, which reads them with
`cited_sentences`): each marked in the text, and the check's count and supports listed under it (`checked_footer`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from assistant.answer_line import AnswerLine
from assistant.tools.base import CardKind, Evidence, Notice, PaperListing, PassagesFound, ProfileSummary, SourceBook
from assistant.safe_markdown import safe_label, safe_markdown
from assistant.tools import Card, ToolDeps, ToolResult
from assistant.turn import Answer, TurnMode, TurnUI, TurnUsage
from pages.base import md_escape
from pages.compare import ComparePage
from pages.paper import PaperPage

if TYPE_CHECKING:
    from assistant.claim_check import Mark

CITATION = re.compile(r"\[(\d{1,3})(?:,?\s*(pp?\.\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?))?\](?!\()")  # [2] or [2, p. 7]
NO_ANSWER = "I could not find an answer."

Numbered = dict[int, tuple[str, str]]  # a source's number -> (title, its page's path): `SourceBook.by_number`


def cited_numbers(text: str) -> list[int]:
    """The numbers a text cites as [n] or [n, p. 7], in first-use order (the one reader of a reply's citations)."""
    return list(dict.fromkeys(int(match.group(1)) for match in CITATION.finditer(text)))


def cited_sentences(text: str) -> list[tuple[str, list[tuple[int, int | None]]]]:
    """The sentences of a model's reply that cite, each with what it cites: (number, first page or None), in order.
    A citation standing after a sentence's full stop belongs to that sentence; a list's bullets and a heading's
    marks are not part of it."""
    found: list[tuple[str, list[tuple[int, int | None]]]] = []
    for line in text.splitlines():
        merged: list[str] = []
        for part in _SENTENCE_END.split(_LIST_MARK.sub("", line).strip()):
            if merged and not CITATION.sub("", part).strip(" .,;:)"):
                merged[-1] += " " + part  # "... the results. [2]": the citation of the sentence before
            elif part.strip():
                merged.append(part)
        for sentence in merged:
            cites = [(int(m.group(1)), _first_page(m.group(2))) for m in CITATION.finditer(sentence)]
            if cites:
                found.append((sentence.strip(), list(dict.fromkeys(cites))))
    return found


_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')*])|(?<=[.!?][\"')*]{2}))\s+(?=[\[(*\"A-Z])")  # not "p. 6"
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#+)\s+")


_ADDRESS = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*\)|\b\w+://\S+")  # a link's address, a bare URL


def as_read(sentence: str) -> str:
    """A sentence as a reader sees it: a link's label without its address, no bare URL."""
    return _ADDRESS.sub("] ", sentence)


def uncited(sentence: str) -> str:
    """What a cited sentence says, read as a reader sees it (`as_read`), its citations left out: the same words
    whatever number the conversation gave the paper."""
    return " ".join(CITATION.sub(" ", as_read(sentence)).split()).replace(" .", ".").replace(" ,", ",")


def _first_page(written: str | None) -> int | None:
    digits = re.search(r"\d+", written or "")
    return int(digits.group(0)) if digits else None


def marked(reply: str, marks: Sequence[Mark]) -> str:
    """The reply with each checked sentence marked after it: ✓ when found in its sources, "(not found in [n])"
    when not (the [n] is linked as the reply's own are)."""
    out, at = [], 0
    for mark in marks:
        start = reply.find(mark.sentence, at)
        if start < 0:
            continue
        end = start + len(mark.sentence)
        cited = "".join(f"[{n}]" for n in mark.cites)
        out += [reply[at:end], " ✓" if mark.found else f" *(not found in {cited})*"]
        at = end
    return "".join(out) + reply[at:]


MOST_LISTED = 20  # checked sentences listed under an answer; the rest are counted


def checked_footer(marks: Sequence[Mark], sources: Numbered) -> str:
    """Under a checked answer: how many of its cited sentences were found in their sources, what "found" means,
    and each sentence with its supporting sentence and page (or what was not there)."""
    if not marks:
        return ""
    found = sum(m.found for m in marks)
    lines = ["", "", f"**Citations checked**: {found} of {len(marks)} cited sentence{'s' if len(marks) != 1 else ''} "
             "found in their sources (found: the figures and names it states are in the cited text, and a sentence "
             "there says nearly the same; whether the reasoning holds is not checked).", ""]  # fmt: skip
    cite = _cite(sources, [])
    for k, mark in enumerate(marks[:MOST_LISTED], 1):
        said = _shortened(safe_label(uncited(mark.sentence)), 14, escape=False)
        if mark.found:
            where = cite(mark.number, f", p. {mark.page}" if mark.page is not None else "")
            lines.append(f"{k}. ✓ “{said}”: {where} “{_shortened(mark.verdict.support, 30)}”")
        else:
            missing = f": {md_escape(', '.join(mark.verdict.missing[:4]))} not there" if mark.verdict.missing else ""
            lines.append(f"{k}. ✗ “{said}”: not found in {''.join(cite(n) for n in mark.cites)}{missing}")
    if len(marks) > MOST_LISTED:
        lines.append(f"… and {len(marks) - MOST_LISTED} more.")
    return "\n".join(lines)


def _shortened(text: str, words: int, escape: bool = True) -> str:
    kept = text.split()
    cut = " ".join(kept[:words]) + (" …" if len(kept) > words else "")
    return md_escape(cut) if escape else cut


def shown_in(result: ToolResult) -> tuple[Evidence, ...]:
    """What a tool showed the model of a paper whole, beyond its cards' quotes: full-text passages (a card quotes
    their first sentences), a paper's page (its abstract)."""
    data = result.data
    if isinstance(data, PassagesFound):
        return data.passages
    if isinstance(data, PaperPage) and result.cards and data.abstract:
        return (Evidence(data.abstract, data.id, result.cards[0].number),)
    return ()


def link_numbers(answer: str, sources: Numbered) -> tuple[str, list[int]]:
    """The answer with [n] (or [n, p. 7]) linked to its paper page, and the numbers it cited, in first-use order."""
    cited: list[int] = []

    def link(match: re.Match) -> str:
        n = int(match.group(1))
        if n not in sources:
            return match.group(0)
        if n not in cited:
            cited.append(n)
        page = f", {match.group(2)}" if match.group(2) else ""
        return f"[[{n}{page}]]({sources[n][1]})"

    text = safe_markdown(CITATION.sub(link, answer))
    return text, cited


def sources_footer(cited: list[int], sources: Numbered) -> str:
    """The papers an answer cited, listed under it."""
    if not cited:
        return ""
    lines = ["", "", "**Sources**", ""]
    for n in cited:
        title, path = sources[n]
        lines.append(f"{n}. [{safe_label(title)}]({path})")
    return "\n".join(lines)


def _cite(sources: Numbered, cited: list[int]):
    """How a text written from data cites paper n: linked as `link_numbers` links a written [n] (and noted)."""

    def cite(n: int, page: str = "") -> str:
        if n not in sources or n > 999:  # (what `CITATION` reads: at most three digits)
            return f"[{n}{page}]"
        if n not in cited:
            cited.append(n)
        return f"[[{n}{page}]]({sources[n][1]})"

    return cite


def linked_listing(result: ToolResult) -> tuple[str, list[int]]:
    """What a listing tool found (references, citing papers, a profile's papers), with each [n] linked, or what it
    said when it found nothing or failed; and the numbers it cited."""
    data = result.data.listing if isinstance(result.data, ProfileSummary) else result.data
    if isinstance(data, PaperListing):
        cited: list[int] = []
        sources = result.sources.by_number() if result.sources is not None else {}
        return safe_markdown(data.to_markdown(_cite(sources, cited))), cited
    return safe_markdown(said(result)), []


def said(result: ToolResult) -> str:
    """What a tool that found nothing, or failed, said ("" when it found something)."""
    return result.data.text if isinstance(result.data, Notice) else ""


def compare_table(page: ComparePage, numbers: dict[str, int], sources: Numbered) -> tuple[list[str], list[int]]:
    """The comparison as a markdown table, written once from its page: each row's paper (`numbers`: its [n]) and each
    cell cite their paper (with the page, for a sentence of its full text), linked; and the numbers cited."""
    cited: list[int] = []
    cite = _cite(sources, cited)
    lines = ["| Paper | " + " | ".join(_cell(a) for a in page.aspects) + " |",
             "| --- |" + " --- |" * len(page.aspects)]  # fmt: skip
    for row in page.rows:
        n = numbers.get(row.paper_id)
        head = f"{cite(n)} " if n else ""
        cells = []
        for c in row.cells:
            if c is None:
                cells.append("—")
            elif n is None:
                cells.append(_cell(f"{c.text} ({c.where})"))
            else:
                cells.append(f"{_cell(c.text)} {cite(n, f', {c.where}' if c.where.startswith('p.') else '')}")
        lines.append(f"| {head}[{_cell(row.title)}]({row.path}) | " + " | ".join(cells) + " |")
    return lines, cited


def _cell(text: str) -> str:
    """Untrusted text in one markdown table cell: escaped, no pipe or line break to split the table."""
    return md_escape(" ".join(text.split())).replace("|", "\\|")


def evidence_of(cards: Iterable[Card], cited: Sequence[int], lead: AnswerLine | None = None,
                shown: Iterable[Evidence] = ()) -> tuple[Evidence, ...]:  # fmt: skip
    """What an answer showed for each [n] it cites: what its tools showed whole (`shown_in`), each cited paper's
    quotes (a sentence of its abstract, a passage with its page), the paper alone when nothing of it was quoted, and
    the answer line's passage."""
    found: dict[str, Evidence] = {}
    if lead is not None:
        kept = replace(lead.evidence, about="", title="", whole=False)
        found[kept.id] = kept
    for item in shown:
        if item.number in cited:
            found.setdefault(item.id, replace(item, about="", title="", whole=False))
    for card in cards:
        if card.number not in cited or card.kind not in (CardKind.PAPER, CardKind.UPLOAD):
            continue
        for item in [Evidence(q.text, card.id, card.number, q.page) for q in card.quotes] or [
                Evidence("", card.id, card.number)]:  # fmt: skip
            found.setdefault(item.id, item)
    return tuple(found.values())


async def written(ui: TurnUI, deps: ToolDeps, text: str, cards: list[Card], *, tool_calls: int, mode: TurnMode,
                  why: str, usage: TurnUsage, exchange: list[dict] | None = None, shown: Sequence[Evidence] = (),
                  marks: Sequence[Mark] = ()) -> Answer:  # fmt: skip
    """A model's reply as the answer: each cited sentence marked as the check found it (`marks`), its [n] linked to
    the papers, the check and the sources it cited under it, and the cards shown with it (the cited papers, and the
    researchers and institutions it is about; everything when nothing is cited). `shown`: what its tools showed
    whole (`shown_in`)."""
    sources = deps.sources.by_number()
    linked, cited = link_numbers(marked(text.strip() or NO_ANSWER, marks), sources)
    answer = linked + checked_footer(marks, sources) + sources_footer(cited, sources)
    on_cards = [c for c in cards if c.kind != CardKind.PAPER or c.number in cited] if cited else cards
    await ui.finish(answer, on_cards)
    return Answer(answer, on_cards, cited, tool_calls, exchange=exchange or [], mode=mode, usage=usage, why=why,
                  weak=not cards, sources=deps.sources, evidence=evidence_of(cards, cited, shown=shown),
                  checks=tuple(marks))  # fmt: skip


async def retrieved(ui: TurnUI, text: str, cards: list[Card], cited: Sequence[int] = (), *, tool_calls: int,
                    sources: SourceBook | None = None, weak: bool = False, error: str | None = None,
                    lead: AnswerLine | None = None, quoted: Sequence[Card] = ()) -> Answer:  # fmt: skip
    """An answer written from what the tools found (no model): `text` with its [n] linked as it was written,
    shown with `cards`; `quoted`: cards of passages the text quotes beside them."""
    await ui.finish(text, cards)
    return Answer(text, cards, list(cited), tool_calls, error, sources=sources, weak=weak, lead=lead,
                  evidence=evidence_of([*cards, *quoted], cited, lead))  # fmt: skip


async def acted(ui: TurnUI, asked: str, tool: str, result: ToolResult) -> Answer:
    """A card's button: the one tool's result shown as the answer to the request the button stands for."""
    text, cited = linked_listing(result)
    text = f"**{md_escape(asked)}**\n\n{text}"
    await ui.finish(text, result.cards)
    return Answer(text, result.cards, cited, 1, mode=TurnMode.ACTION, why=f"the card's button ran {tool}",
                  weak=result.failed or not result.cards, question=asked, sources=result.sources,
                  evidence=evidence_of(result.cards, cited))  # fmt: skip
