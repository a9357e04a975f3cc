"""What every tool shares: its dependencies, its result (with the `Evidence` it showed), and a JSON schema derived
from its signature."""

from __future__ import annotations

import functools
import inspect
import logging
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from pydantic import Field, ValidationError, create_model

from retrieval.archive import Archive
from retrieval.scholarly.models import Paper
from pages.base import paper_path

log = logging.getLogger(__name__)


class ToolError(Exception):
    """An expected failure whose message the model should read (e.g. an unknown paper id)."""


@dataclass
class SourceBook:
    """Numbers papers as they appear in a conversation, so [n] means the same paper in every turn."""

    entries: dict[str, tuple[int, str, str]] = field(default_factory=dict)  # paper id -> (n, title, path)

    def number(self, paper: Paper) -> int:
        if paper.id not in self.entries:
            self.entries[paper.id] = (len(self.entries) + 1, paper.title, paper_path(paper))
        return self.entries[paper.id][0]

    def by_number(self) -> dict[int, tuple[str, str]]:
        return {n: (title, path) for n, title, path in self.entries.values()}

    def copy(self) -> SourceBook:
        return SourceBook(dict(self.entries))


@dataclass(frozen=True)
class ToolDeps:
    """Hidden from the schema: the services (the archive, the session's user) and the conversation as the turn
    stands (its numbered sources, scope and focus). Never changed: a tool numbers papers into its own copy of the
    sources, which its result carries (`ToolResult.sources`), and the turn moves on with `after`."""

    archive: Archive
    user: str | None = None
    sources: SourceBook = field(default_factory=SourceBook)
    scope_paper_id: str | None = None
    only_papers: tuple[str, ...] | None = None  # a chat about the user's library: searches see these papers only
    max_results: int = 10
    focus: tuple["Card", ...] = ()  # the previous answer's cards: "she" or "it" in a follow-up, read without a model
    focus_weak: bool = False  # those cards were only the closest matches to a question nothing here answered well
    about: "Card | None" = None  # the researcher or institution the chat was opened about (its page's chat dock)
    library_ids: Callable[[str], list[str]] | None = None  # a user's library (kept, `upload:<n>`): get_my_library
    evidence: tuple["Evidence", ...] = ()  # what earlier answers showed of the papers they cited (the check's)

    def after(self, result: ToolResult) -> ToolDeps:
        """The deps the turn's next step runs with: the sources as `result` left them."""
        return self if result.sources is None else replace(self, sources=result.sources)


class CardKind(StrEnum):
    """What a card stands for; the chat's card element shows each kind's own actions."""

    PAPER = "paper"
    UPLOAD = "upload"  # a user's own PDF: only its page (no references, citations or BibTeX of the catalog's)
    RESEARCHER = "researcher"
    INSTITUTION = "institution"
    COMPARE = "compare"  # a comparison table, opened as a page
    GRAPH = "graph"  # a paper's citation neighbourhood or a researcher's co-author network, drawn on its page


@dataclass(frozen=True)
class Quote:
    """A sentence or passage of a paper that matches the question; `page` when it is from the full text."""

    text: str
    page: int | None = None

    def __str__(self) -> str:  # how a card shows it
        return f"p. {self.page}: {self.text}" if self.page is not None else self.text

    @classmethod
    def of(cls, stored: object) -> "Quote":  # a stored answer's: a dict, or an older version's plain string (its text)
        if isinstance(stored, dict):
            page = stored.get("page")
            return cls(str(stored.get("text", "")), page if isinstance(page, int) else None)
        return cls(str(stored))


@dataclass(frozen=True)
class Evidence:
    """A text an answer showed of the paper cited as `number` (found by a tool, weighed by `assistant.answer_line`,
    numbered and kept with the answer by `assistant.composer`): a full-text passage (its `page`, and its `passage` index in the paper's
    full text when known) or an abstract's sentence (page None); empty when the paper was shown by its title alone.
    `about`, `title` and `whole` are what the answer line weighs beside the text; they are not kept with an answer."""

    text: str
    paper_id: str
    number: int
    page: int | None = None
    about: str = ""  # the paper's title and abstract: a name of the question they hold, each of its texts holds
    title: str = ""  # the paper's title: a definition quoted from its first page ends with it
    whole: bool = False  # the text begins where its source does (an abstract, a title), never inside a sentence
    passage: int | None = None  # the passage's index among its paper's passages (a full-text passage only)

    @property
    def id(self) -> str:
        """Stable across turns: the paper, then the passage and page, or the text's own words for an abstract's."""
        if self.passage is not None:
            return f"{self.paper_id}#passage-{self.passage}"
        if self.page is not None:
            return f"{self.paper_id}#p{self.page}:{self.text[:80]}"
        return f"{self.paper_id}#{self.text[:80]}" if self.text else self.paper_id

    def kept(self) -> dict:  # what a stored answer keeps of it
        return {"paper_id": self.paper_id, "number": self.number, "text": self.text, "page": self.page,
                "passage": self.passage}  # fmt: skip

    @classmethod
    def stored(cls, item: object) -> Evidence | None:
        """From what `kept` wrote (None for anything else: stored by another version, or not evidence at all)."""
        if not isinstance(item, dict) or not isinstance(item.get("paper_id"), str):
            return None
        number, page, passage = item.get("number"), item.get("page"), item.get("passage")
        if not isinstance(number, int) or isinstance(number, bool):
            return None
        return cls(str(item.get("text") or ""), item["paper_id"], number, page if isinstance(page, int) else None,
                   passage=passage if isinstance(passage, int) else None)  # fmt: skip


def stored_evidence(items: object) -> tuple[Evidence, ...]:
    """The evidence a stored answer kept; nothing when it kept none (a conversation stored before answers did)."""
    found = (Evidence.stored(item) for item in (items if isinstance(items, list) else []))
    return tuple(item for item in found if item is not None)


@dataclass(frozen=True)
class PapersFound:
    """What `search_papers` found, for the app: the query as searched, the researchers it names (theirs first)."""

    query: str
    named_people: tuple[str, ...] = ()
    weak: bool = False  # no paper cleared the relevance floor: the cards are only the closest matches
    weaker: int = 0  # papers under the floor left out beside those that cleared it
    note: str | None = None  # how the search read the query ("Read "GRPO" as "Group Relative Policy ...", ...")


@dataclass(frozen=True)
class PassagesFound:
    """What `search_fulltext` found, for the app: the passages as shown, and whether none cleared the floor."""

    query: str
    passages: tuple[Evidence, ...] = ()  # each whole, with its page and index (its card quotes whole sentences only)
    weak: bool = False


@dataclass(frozen=True)
class Card:
    """A structured item the chat shows beside the text (a paper card with actions)."""

    kind: CardKind
    id: str
    title: str
    path: str
    subtitle: str = ""
    number: int | None = None
    quotes: tuple[Quote, ...] = ()  # sentences of the paper that match the question


@dataclass(frozen=True)
class Listed:
    """A line of a tool's text that opens with a paper's citation number ("[n] " and then `text`)."""

    number: int
    text: str


@dataclass(frozen=True)
class PaperListing:
    """What a tool listing papers wrote (references, citing papers, the nearest papers, a profile's papers): its
    lines, those that cite a paper apart, so the app links each [n] without reading the text back."""

    lines: tuple[str | Listed, ...] = ()

    def to_markdown(self, cite: Callable[[int], str] = "[{}]".format) -> str:
        return "\n".join(line if isinstance(line, str) else f"{cite(line.number)} {line.text}" for line in self.lines)

    @property
    def numbers(self) -> list[int]:
        """The papers it cites, in the order it lists them."""
        return list(dict.fromkeys(line.number for line in self.lines if isinstance(line, Listed)))


@dataclass(frozen=True)
class ProfileSummary:
    """What a summary tool assembled from the catalog: one sentence of statistics (plain text, not markdown), whose
    profile it is, and the listing the model reads (the sentence, then the papers)."""

    assembled: str
    name: str
    path: str
    listing: PaperListing = PaperListing()


@dataclass(frozen=True)
class Notice:
    """What a tool that found nothing, or failed, says: words a person may read as they stand."""

    text: str


@dataclass
class ToolResult:
    """What the model reads (`output`, markdown) and what the app uses (`cards`, and `data`: the typed object the
    text was written from, e.g. a `ResearcherPage`); nothing in the app parses `output`."""

    output: str
    cards: list[Card] = field(default_factory=list)
    exception: BaseException | None = None
    data: object | None = None
    sources: SourceBook | None = None  # the conversation's numbered sources after the call (`call_tool` sets it)

    @property
    def failed(self) -> bool:
        return self.exception is not None


Tool = Callable[..., ToolResult]


def notice(text: str, exception: BaseException | None = None, sources: SourceBook | None = None) -> ToolResult:
    """A result that is one notice (nothing found, or a failure): the model and the app read the same words."""
    return ToolResult(text, exception=exception, data=Notice(text), sources=sources)


def _arg_docs(doc: str) -> dict[str, str]:
    """Descriptions from a Google-style 'Args:' section."""
    match = re.search(r"Args:\n(.*?)(\n\s*\n|\Z)", doc, re.S)
    if not match:
        return {}
    docs, current = {}, None
    for line in match.group(1).splitlines():
        item = re.match(r"^\s+(\w+)(?: \([^)]*\))?:\s*(.*)", line)
        if item:
            current = item.group(1)
            docs[current] = item.group(2).strip()
        elif current and line.strip():
            docs[current] += " " + line.strip()
    return docs


@functools.cache
def _arguments_model(fn: Tool):
    hints = typing.get_type_hints(fn)
    docs = _arg_docs(inspect.getdoc(fn) or "")
    fields = {}
    for name, param in list(inspect.signature(fn).parameters.items())[1:]:  # the first is deps
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (hints[name], Field(default, description=docs.get(name)))
    return create_model(f"{fn.__name__}_arguments", **fields)


def tool_schema(fn: Tool) -> dict:
    """The OpenAI-style function schema of a tool, derived from its signature and docstring."""
    doc = inspect.getdoc(fn) or ""
    description = doc.split("\n\nArgs:")[0].strip()
    parameters = _arguments_model(fn).model_json_schema()
    parameters.pop("title", None)
    for prop in parameters.get("properties", {}).values():
        prop.pop("title", None)
    return {"type": "function", "function": {"name": fn.__name__, "description": description, "parameters": parameters}}


def call_tool(fn: Tool, deps: ToolDeps, arguments: dict | None) -> ToolResult:
    """Validate arguments and run the tool; failures become results the model can read. The tool numbers papers
    into a copy of `deps.sources`; the result carries that copy (`deps` is left as it was)."""
    try:
        args = _arguments_model(fn).model_validate(arguments or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        return notice(f"Error: invalid arguments for {fn.__name__}: {problems}", exc, deps.sources)
    own = replace(deps, sources=deps.sources.copy())
    try:
        return replace(fn(own, **args.model_dump()), sources=own.sources)
    except ToolError as exc:
        return notice(f"Error: {exc}", exc, deps.sources)
    except Exception as exc:  # logged with its trace; the model only learns what is unavailable
        log.exception("tool %s failed", fn.__name__)
        return notice(
            f"Error: {fn.__name__} is unavailable right now: {_what_failed(exc)} ({type(exc).__name__}). "
            "Tell the user that search is unavailable for the moment and to try again shortly; do not answer "
            "from memory.",
            exc,
            deps.sources,
        )


def _what_failed(exc: BaseException) -> str:
    from sqlalchemy.exc import DBAPIError, OperationalError

    from retrieval.vectors.store import IndexUnavailable

    if isinstance(exc, IndexUnavailable):
        return "the search index did not answer"
    if isinstance(exc, (OperationalError, DBAPIError)):
        return "the catalog database did not answer"
    return "it failed unexpectedly"


def unavailable(result: ToolResult) -> bool:
    """Whether a tool failed because something under it broke (a store down), not because of what it was asked."""
    return result.failed and not isinstance(result.exception, (ToolError, ValidationError))
