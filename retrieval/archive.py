"""The archive as one object: the catalog, the vector index and the embedder, and every way of reading them.

Tools, pages, the JSON API and the benchmarks hold an `Archive` (built by `settings.archive()`, in
`scholarloom/services.py`), never the three stores apart; what they ask of it is written once here, over
`retrieval.search.hybrid` and the profile modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.library.uploads import PREFIX
from retrieval.library.visible import visible_papers
from retrieval.scholarly import citations, institutions, listings, researchers
from retrieval.scholarly.catalog import Catalog, PaperView
from retrieval.scholarly.models import Citation, Paper, Researcher
from retrieval.scholarly.paging import Pages, PaperList
from retrieval.search import compare
from retrieval.search.support import Supported, paper_support
from retrieval.search.hybrid import PassageResult, SearchResult, nearest_papers, search_passages
from retrieval.search.people_first import people_first_search
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.index import Index
from retrieval.vectors.store import Filters


@dataclass(frozen=True)
class Archive:
    catalog: Catalog
    index: Index
    embedder: Embedder

    # --- search -------------------------------------------------------------------------------------
    def search(self, query: str, filters: Filters = Filters(), limit: int = 8, sentences: int = 0,
               quote_weak: bool = True) -> SearchResult:  # fmt: skip
        """Hybrid search over titles and abstracts, one hit per paper (see `retrieval.search.hybrid.search`); the papers
        of the people the query names come first (`retrieval.search.people_first`)."""
        return people_first_search(self.catalog, self.index, self.embedder, query, filters, limit, sentences,
                                   quote_weak)  # fmt: skip

    def passages(
        self, query: str, filters: Filters = Filters(), limit: int = 8, per_paper: int | None = None
    ) -> PassageResult:
        """Hybrid search over full-text passages, each with its page."""
        return search_passages(self.catalog, self.index, self.embedder, query, filters, limit, per_paper)

    def compare(self, paper_ids: list[str], aspects: list[str] | None = None) -> compare.Comparison:
        """For each paper and aspect, the paper's own sentence that answers it best (`retrieval.search.compare`)."""
        return compare.compare(self.catalog, self.index, self.embedder, paper_ids, aspects)

    def support(self, paper_id: str, sentence: str, viewer: str | None = None) -> Supported | None:
        """Whether the paper's own text (its abstract, its passages nearest the sentence) supports `sentence`, without
        a model (`retrieval.search.support`); None when there is no such paper for `viewer`."""
        resolved = self.resolve_paper_id(paper_id, viewer)
        paper = self.papers([resolved], viewer).get(resolved) if resolved else None
        return paper_support(self.catalog, self.index, self.embedder, paper, sentence, viewer) if paper else None

    def similar(self, paper_id: str, limit: int = 5, filters: Filters = Filters()) -> list[tuple[Paper, float]]:
        """The paper's nearest neighbours by meaning, itself left out."""
        return nearest_papers(self.catalog, self.index, self.embedder, paper_id, limit, filters)

    # --- papers, people, places, citations ----------------------------------------------------------
    def papers(self, ids: list[str], viewer: str | None = None) -> dict[str, Paper]:
        """Public papers by id, and `viewer`'s own uploads among the ids."""
        return visible_papers(self.catalog, ids, viewer)

    def resolve_paper_id(self, raw: str, viewer: str | None = None) -> str | None:
        """A catalog paper's id from any form of its id; `upload:<n>` only for the upload's owner."""
        if raw.strip().startswith(PREFIX):
            return raw.strip() if viewer and visible_papers(self.catalog, [raw.strip()], viewer) else None
        return self.catalog.resolve_paper_id(raw)

    def paper_view(self, paper_id: str) -> PaperView | None:
        return self.catalog.paper_view(paper_id)

    def author_names(self, ids: list[str]) -> dict[str, list[str]]:
        return self.catalog.author_names(ids)

    def references(self, paper_id: str) -> list[Citation]:
        return self.catalog.references(paper_id)

    def counts(self) -> dict[str, int]:
        return self.catalog.counts()

    def index_points(self) -> dict[str, int]:
        """Points in the vector index by kind (a paper's title and abstract, its sentence windows, a full-text
        passage)."""
        return self.index.points_by_kind()

    def researcher(self, researcher_id: int, page: int = 1, category: str | None = None, per_page: int | None = None):
        return researchers.researcher_profile(self.catalog, researcher_id, page, category, per_page)

    def researchers_by_ids(self, ids: list[int]) -> dict[int, Researcher]:
        return researchers.researchers_by_ids(self.catalog, ids)

    def paper_counts(self, researcher_ids: list[int]) -> dict[int, int]:
        return researchers.paper_counts(self.catalog, researcher_ids)

    def newest_papers_of(self, researcher_ids: list[int], limit: int = 50) -> list[Paper]:
        return researchers.newest_papers_of(self.catalog, researcher_ids, limit)

    def researcher_candidates(self, ids: tuple[int, ...]) -> list[researchers.ResearcherCandidate]:
        return researchers.candidates_by_ids(self.catalog, ids)

    def find_researchers(
        self, text: str, limit: int = 10, partial: bool = True
    ) -> list[researchers.ResearcherCandidate]:
        return researchers.find_researchers(self.catalog, text, limit, partial)

    def institution(self, institution_id: int, page: int = 1, category: str | None = None, per_page: int | None = None):
        return institutions.institution_profile(self.catalog, institution_id, page, category, per_page)

    def find_institution(self, text: str, threshold: float | None = None) -> institutions.InstitutionLookup:
        return institutions.look_up_institution(self.catalog, text, threshold)

    def cited_by(self, paper_id: str, limit: int = 50) -> citations.CitedBy:
        return citations.cited_by(self.catalog, paper_id, limit)

    # --- listings -----------------------------------------------------------------------------------
    def newest(self, category: str | None = None, limit: int = 50) -> list[Paper]:
        return listings.newest_papers(self.catalog, category, limit)

    def categories(self, limit: int | None = None) -> list[tuple[str, int]]:
        return listings.categories(self.catalog, limit)

    def all_papers(
        self, category: str | None, page: int, per_page: int, after: str | None = None, before: str | None = None
    ) -> PaperList:
        return listings.all_papers(self.catalog, category, page, per_page, after, before)

    def most_papers(
        self, kind: listings.People, page: int, per_page: int, words: str = ""
    ) -> tuple[list[tuple[int, str, int]], int, Pages]:
        return listings.most_papers(self.catalog, kind, page, per_page, words)

    def indexable_count(self, kind: listings.Kind) -> int:
        return listings.indexable_count(self.catalog, kind)

    def sitemap_parts(self, kind: listings.Kind, limit: int) -> list[listings.SitemapPart]:
        return listings.sitemap_parts(self.catalog, kind, limit)

    def sitemap_entries(self, kind: listings.Kind, part: listings.SitemapPart) -> list[listings.Listed]:
        return listings.sitemap_entries(self.catalog, kind, part)
