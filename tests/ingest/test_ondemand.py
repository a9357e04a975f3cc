"""One arXiv paper on request: record by id, OpenAlex (knows nothing here), index, full text; an unknown id ends
with a clear message and stores nothing."""

import pytest

from ingest.ondemand import NotOnArxiv, fetch_paper
from ingest.report import Summary
from retrieval.index import Filters
from tests.ingest.ondemand_fixtures import ASKED, recorded_routes
from tests.ingest.test_http import make_client
from tests.replay import Replay

API = "https://export.arxiv.org/api/query"


def test_a_paper_is_fetched_by_its_id_alone(empty_instance):
    from ingest.harvest.openalex import OpenAlex

    settings = empty_instance
    replay = recorded_routes(Replay())
    summary = Summary()
    with make_client(replay) as client:
        openalex = OpenAlex(client, "https://api.openalex.org", "ops@example.org", None)
        paper_id = fetch_paper(settings.catalog(), settings.index(), settings.embedder(), client, ASKED, summary,
                               api_url=API, openalex=openalex)  # fmt: skip
    assert paper_id == ASKED
    paper = settings.catalog().papers([ASKED])[ASKED]
    assert paper.title and paper.abstract and paper.arxiv_id == ASKED
    assert settings.index().count(Filters(kinds=("abstract",), paper_ids=(ASKED,))) == 1
    assert settings.index().count(Filters(kinds=("passage",), paper_ids=(ASKED,))) > 10
    asked = [(r.url.host, r.url.path, dict(r.url.params)) for r in replay.requests]
    assert asked[0] == ("export.arxiv.org", "/api/query", {"id_list": ASKED, "max_results": "1"})
    assert ("arxiv.org", f"/pdf/{ASKED}", {}) in asked  # every address built from the id
    assert summary.counts["passages"] > 10 and summary.counts["indexed"] == 1


def test_an_id_arxiv_does_not_have_ends_clearly(empty_instance):
    settings = empty_instance
    with make_client(recorded_routes(Replay())) as client, pytest.raises(NotOnArxiv, match="arXiv has no paper"):
        fetch_paper(settings.catalog(), settings.index(), settings.embedder(), client, "2512.99999", Summary(),
                    api_url=API)  # fmt: skip
    assert settings.catalog().counts()["papers"] == 0
