"""Saved questions (`web.watching`, `jobs.watches`, `retrieval.library.watches`): "Watch this" keeps a question; the
job that brings a matching paper is followed by a run that records a change (with the sentences that matched), an
unrelated paper brings none; the change is on the user's page and in their private feed, nobody else's; a question
can be run on demand (within the user's share of the queue) and forgotten; the quota."""

from __future__ import annotations

import re

from defusedxml import ElementTree
from pydantic import SecretStr

from auth.follows import Follows
from jobs.queue import JobQueue, JobState
from jobs.registry import FOLLOW_UPS
from retrieval.library.watches import JUDGED_A_DAY, MAX_QUESTIONS, Watches
from tests.ingest.ondemand_fixtures import ALSO_ASKED, ASKED, recorded_routes
from tests.replay import Replay
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app, _run_jobs

SAME_SITE = {"Origin": "http://test"}
QUESTION = "interactive previews while a video diffusion model generates"


def _run(settings, replay: Replay) -> list:
    """The server's worker as `serve` builds it (saved questions run again after papers come), until no job is left."""
    return _run_jobs(settings, replay, follow_ups=FOLLOW_UPS, seconds=120)


async def test_a_saved_question_hears_of_a_matching_paper_and_not_of_an_unrelated_one(empty_instance):
    app = _app(empty_instance)
    jo, kim = client_for(app, "jo"), client_for(app, "kim")
    search = await jo.get("/search", params={"q": QUESTION})
    assert 'action="/me/watching"' in search.text and "Watch this" in search.text
    assert "Watch this" not in (await client_for(app).get("/search", params={"q": QUESTION})).text
    saved = await jo.post("/me/watching", data={"q": QUESTION, "scope": "all"}, headers=SAME_SITE)
    assert saved.status_code == 303
    assert (await jo.post("/me/watching", data={"q": QUESTION}, headers={"Origin": "https://evil.example"})
            ).status_code == 403  # fmt: skip
    (question,) = Watches(empty_instance.catalog().engine).of("jo")
    assert question.seen == [] and question.scope == "all"  # nothing answered it when it was saved

    replay = recorded_routes(Replay(), ASKED, ALSO_ASKED)
    queue = JobQueue(empty_instance.catalog().engine)
    queue.submit("paper", {"arxiv_id": ASKED}, "someone", key=f"paper:{ASKED}")
    jobs = _run(empty_instance, replay)
    assert [j.kind for j in jobs[:2]] == ["watches", "paper"] and jobs[0].state == JobState.DONE, jobs[0].error
    assert "1 saved question run, 1 with news" in jobs[0].note
    assert jobs[0].counts["searched whole"] == 1  # nothing had answered it: its first run searches its whole scope
    assert 'Saved questions <span class="badge">1 new</span>' in (await jo.get("/papers")).text  # every page's badge
    assert "badge" not in (await kim.get("/papers")).text
    page = (await jo.get("/me/watching.md")).text
    assert f"### 1 new paper on {QUESTION}" in page and "(new)" in page
    assert "[DiffusionBrowser: Interactive Diffusion Previews via Multi-Branch Decoders](/papers/2512.13690" in page
    assert "    > " in page  # the sentences that matched
    assert "(new)" not in (await jo.get("/me/watching.md")).text  # read once seen

    queue.submit("paper", {"arxiv_id": ALSO_ASKED}, "someone", key=f"paper:{ALSO_ASKED}")
    jobs = _run(empty_instance, replay)
    assert jobs[0].kind == "watches" and "1 saved question run, 0 with news" in jobs[0].note
    assert jobs[0].counts["searched whole"] == 0  # then only the paper indexed since its last run is searched
    assert (await jo.get("/me/watching.md")).text.count("### ") == 1  # LitePT (point clouds) is no news

    key = Follows(empty_instance.catalog().engine).feed_key("jo")
    feed = ElementTree.fromstring((await client_for(app).get("/me/feed.xml", params={"key": key})).content)
    assert [i.findtext("title") for i in feed.findall("./channel/item")][:1] == [
        "DiffusionBrowser: Interactive Diffusion Previews via Multi-Branch Decoders"]
    assert QUESTION not in (await kim.get("/me/watching.md")).text and "DiffusionBrowser" not in (
        await kim.get("/me/watching.md")).text  # fmt: skip

    # On demand: the same question run again finds nothing it has not seen; then it is forgotten.
    assert (await kim.post(f"/me/watching/{question.id}/run", headers=SAME_SITE)).status_code == 404
    assert (await jo.post(f"/me/watching/{question.id}/run", headers=SAME_SITE)).status_code == 303
    jobs = _run(empty_instance, replay)
    assert jobs[0].kind == "watches" and jobs[0].arguments == {"owner": "jo", "question": question.id}
    assert "1 saved question run, 0 with news" in jobs[0].note and jobs[0].counts["searched whole"] == 1
    from auth.accounts import set_admin

    set_admin(empty_instance.catalog().engine, "kim", True)
    every = await kim.get("/admin/watching.md")
    assert every.status_code == 200 and f"| jo | {QUESTION} | the archive | 1 |" in every.text
    assert f"| 0 of {JUDGED_A_DAY} |" in every.text  # (retrieval-only: the model wrote none)
    assert f"<td>0 of {JUDGED_A_DAY}</td>" in (await kim.get("/admin/watching")).text
    assert (await jo.get("/admin/watching")).status_code == 404
    assert (await jo.post(f"/me/watching/{question.id}/delete", headers=SAME_SITE)).status_code == 303
    assert Watches(empty_instance.catalog().engine).of("jo") == []
    assert "Nothing new yet." in (await jo.get("/me/watching.md")).text


async def test_the_quota_of_saved_questions(empty_instance):
    app = _app(empty_instance)
    jo = client_for(app, "jo")
    for n in range(MAX_QUESTIONS):
        Watches(empty_instance.catalog().engine).save("jo", f"question {n}", "all", [])  # (nothing answers)
    refused = await jo.post("/me/watching", data={"q": "one more", "scope": "all"}, headers=SAME_SITE)
    assert refused.status_code == 400 and f"You keep {MAX_QUESTIONS} questions" in refused.text
    bad = await jo.post("/me/watching", data={"q": "x", "scope": "category", "category": "cs.CL'; --"},
                        headers=SAME_SITE)  # fmt: skip
    assert bad.status_code == 400 and "where to watch" in bad.text


async def test_run_now_is_within_the_users_share_of_the_queue(empty_instance):
    """A run asked for on the page is one of the user's live jobs (it was queued whatever they had waiting)."""
    jo, watches = client_for(_app(empty_instance, user_jobs=1), "jo"), Watches(empty_instance.catalog().engine)
    first, second = (watches.save("jo", f"question {n}", "all", []) for n in range(2))
    for _ in range(2):  # (the second shares the first's job)
        assert (await jo.post(f"/me/watching/{first.id}/run", headers=SAME_SITE)).status_code == 303
    refused = await jo.post(f"/me/watching/{second.id}/run", headers=SAME_SITE)
    assert refused.status_code == 429 and "Not run:" in refused.text and "1 files or papers waiting" in refused.text
    assert [j.arguments["question"] for j in JobQueue(empty_instance.catalog().engine).recent()] == [first.id]


async def test_past_the_write_rate_a_form_answers_with_the_page_and_the_reason(empty_instance):
    """The saved-question forms keep to the user's rate of writes (30 a minute); past it the answer is the page,
    429 with Retry-After and the reason in words, not a JSON body a browser would show raw."""
    jo = client_for(_app(empty_instance), "jo")
    for _ in range(30):
        assert (await jo.post("/me/watching/digest", data={"every": "off"}, headers=SAME_SITE)).status_code == 303
    for path, data, said in (("/me/watching/digest", {"every": "off"}, "Not changed:"),
                             ("/me/watching", {"q": QUESTION, "scope": "all"}, "Not saved:")):  # fmt: skip
        refused = await jo.post(path, data=data, headers={**SAME_SITE, "Accept": "text/markdown"})
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1, refused.text
        assert refused.headers["content-type"].startswith("text/markdown") and said in refused.text
        assert "Too many changes" in refused.text
    assert Watches(empty_instance.catalog().engine).of("jo") == []


async def test_a_new_version_of_a_cited_paper_is_noted_and_its_quotes_checked_again(empty_instance):
    from sqlmodel import Session

    from retrieval.scholarly.models import Paper

    app = _app(empty_instance)
    jo = client_for(app, "jo")
    queue = JobQueue(empty_instance.catalog().engine)
    queue.submit("paper", {"arxiv_id": ASKED}, "someone", key=f"paper:{ASKED}")
    _run(empty_instance, recorded_routes(Replay(), ASKED))
    await jo.post("/me/watching", data={"q": QUESTION, "scope": "all"}, headers=SAME_SITE)
    (question,) = Watches(empty_instance.catalog().engine).of("jo")
    cited = question.cited[ASKED]
    assert question.seen == [ASKED] and cited["version"] == 1 and cited["quotes"], cited
    quote = cited["quotes"][0]

    def new_version(number: int, abstract) -> str:
        """What a harvest writes when arXiv has a newer version: its number and its abstract; then a run."""
        with Session(empty_instance.catalog().engine) as session:
            paper = session.get(Paper, ASKED)
            paper.version, paper.abstract = number, abstract(paper.abstract)
            session.add(paper)
            session.commit()
        queue.submit("watches", {}, "schedule", key="watches")
        return _run(empty_instance, Replay())[0].note

    assert "1 with news" in new_version(2, lambda text: text)  # the same abstract
    page = (await jo.get("/me/watching.md")).text
    assert f"### 1 new version of a paper it cited on {QUESTION}" in page, page
    assert "DiffusionBrowser: Interactive Diffusion Previews via Multi-Branch Decoders (version 2, was 1)" in page
    assert f"    > kept: {quote}" in page
    assert "1 with news" in new_version(3, lambda text: text.replace(quote, ""))  # the quoted sentence cut
    page = (await jo.get("/me/watching.md")).text
    assert "(version 3, was 2)" in page and f"    > gone: {quote}" in page
    queue.submit("watches", {}, "schedule", key="watches")
    assert "0 with news" in _run(empty_instance, Replay())[0].note  # noted once


# Written for this test (the on-demand paper has no recorded PDF): a page of full text that answers the question
# better than the abstract does, so its passages clear the floor when it comes.
PASSAGE = [
    "4 Interactive previews during generation",
    "While the video diffusion model is still denoising, DiffusionBrowser decodes a preview of the video at every",
    "step, so the user sees the motion and layout early and can stop or steer the generation. The multi-branch",
    "decoder renders these interactive previews in real time from the intermediate features of the model.",
]


def text_pdf(path, lines: list[str]) -> None:
    """A one-page PDF whose text pypdf reads back: `lines` in Helvetica."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})  # fmt: skip
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})  # fmt: skip
    shown = " ".join("(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '" for line in lines)
    content = DecodedStreamObject()
    content.set_data(f"BT /F1 10 Tf 14 TL 60 740 Td {shown} ET".encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(content)
    with open(path, "wb") as out:
        writer.write(out)


async def test_full_text_that_comes_later_is_a_change_and_the_model_says_what_it_does(
    empty_instance, scripted, tmp_path, monkeypatch
):
    """LLM mode: the paper answered from its abstract; its full text comes (a `pdfs` job) with passages that answer
    the question: a change, once, with the model's cited sentence (its first answer cites a text it was not given:
    asked again); the sentence is shown as text, its numbers link to the papers it was given. A user whose daily
    share of the model's sentences is used gets the change without one."""
    from sqlmodel import Session

    from harness.llm_server import text
    from retrieval.library.watches import QuestionChange
    from retrieval.scholarly.models import Paper
    from pages.base import md_escape

    app = _app(empty_instance, llm="openai/scripted", llm_api_base=scripted.api_base,
               llm_api_key=SecretStr("k"))
    jo = client_for(app, "jo")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot a PDF after all\n")
    queue = JobQueue(empty_instance.catalog().engine)
    queue.submit("paper", {"arxiv_id": ASKED}, "someone", key=f"paper:{ASKED}")
    _run(empty_instance, recorded_routes(Replay(), ASKED, pdf=broken))  # its record, no full text
    await jo.post("/me/watching", data={"q": QUESTION, "scope": "all"}, headers=SAME_SITE)
    (question,) = Watches(empty_instance.catalog().engine).of("jo")
    assert question.seen == [ASKED] and question.cited[ASKED]["text"] is False and question.cited[ASKED]["page"] is None
    await client_for(app, "kim").post("/me/watching", data={"q": QUESTION, "scope": "all"}, headers=SAME_SITE)
    (kims,) = Watches(empty_instance.catalog().engine).of("kim")
    monkeypatch.setattr("jobs.watches.JUDGED_A_DAY", 1)
    with Session(empty_instance.catalog().engine) as session:  # kim had one today already
        session.add(QuestionChange(question_id=kims.id, owner="kim", papers=[], judgement={"relation": "supports"}))
        session.commit()

    folder = tmp_path / "fulltext"
    folder.mkdir()
    text_pdf(folder / f"{ASKED}.pdf", PASSAGE)
    scripted.enqueue(
        text('{"relation": "extends", "text": "The full text adds live previews [7]."}'),  # no text 7: asked again
        text('{"relation": "extends", "text": "Previews are decoded at every denoising step [2], beyond the '
             'abstract\'s claim [1] <script>alert(1)</script>."}'),  # fmt: skip
    )
    queue.submit("pdfs", {"paths": [str(folder)]}, "admin", key="pdfs")
    jobs = _run(empty_instance, Replay())
    assert [j.kind for j in jobs[:2]] == ["watches", "pdfs"] and "2 with news" in jobs[0].note, jobs[0].note
    assert jobs[0].counts["not judged: daily share used"] == 1 and len(scripted.requests) == 2  # jo's alone
    (kims_change, _), _ = Watches(empty_instance.catalog().engine).changes("kim")
    assert kims_change.judgement is None and kims_change.papers[0]["kind"] == "passages"
    asked = [m["content"] for m in scripted.requests[0]["messages"]]
    assert "[1] (EARLIER) DiffusionBrowser" in asked[1] and "[2] (NEW) DiffusionBrowser" in asked[1]
    assert "not usable: cite the texts" in scripted.requests[1]["messages"][-1]["content"].lower()
    spent = _spent(empty_instance.catalog().engine)  # the two requests count against jo's day, as chat turns do
    assert set(spent) == {("jo", "saved question")} and len(spent["jo", "saved question"]) == 2

    page = (await jo.get("/me/watching.md")).text
    assert f"### 1 paper it cited with new passages on {QUESTION}" in page, page
    assert "(full text, p. 1)" in page and "decodes a preview of the video at every step" in page
    assert ("**The new evidence extends the earlier answer:** Previews are decoded at every denoising step "
            f"[\\[2\\]](/papers/{ASKED}-diffusionbrowser") in page  # fmt: skip
    assert re.search(r"\([01] of 1 cited sentence found in the texts they cite", page), page  # checked (issue 71)
    html = (await jo.get("/me/watching")).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert f'<a href="/papers/{ASKED}-diffusionbrowser' in html.split('class="judgement"')[1].split("</p>")[0]

    queue.submit("watches", {}, "schedule", key="watches")
    assert "0 with news" in _run(empty_instance, Replay())[0].note  # its full text is looked at once
    Watches(empty_instance.catalog().engine).forget("kim", kims.id)

    # A new version with the same text: the passage it was quoted for (cut short in the quote) is still there.
    quote = Watches(empty_instance.catalog().engine).of("jo")[0].cited[ASKED]["quotes"][0]
    with Session(empty_instance.catalog().engine) as session:
        paper = session.get(Paper, ASKED)
        paper.version = (paper.version or 1) + 1
        session.add(paper)
        session.commit()
    queue.submit("watches", {}, "schedule", key="watches")
    assert "1 with news" in _run(empty_instance, Replay())[0].note
    assert f"    > kept: {md_escape(quote)}" in (await jo.get("/me/watching.md")).text


def test_a_run_after_an_update_reads_only_what_came_since_and_searches_all_when_too_much_came(tmp_path):
    """`Catalog.ledger_since` reads the newest entries since a moment (at most a limit, saying from when that is
    all of them); `since_last_run` gives a question the papers that came since its own last run, or None (its whole
    scope) when it never ran on it, watches the user's papers, or more came than were read."""
    import time
    from datetime import datetime, timezone

    from jobs.watches import since_last_run
    from retrieval.library.watches import SavedQuestion
    from retrieval.scholarly.catalog import Catalog

    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    catalog.mark_all("index", {"old": "x"})
    time.sleep(0.01)
    between = datetime.now(timezone.utc)
    time.sleep(0.01)
    catalog.mark_all("index", {"a": "x", "b": "x"})
    catalog.mark_all("fulltext", {"c": "x"})
    catalog.mark_all("analysis", {"d": "x"})  # not a stage that brings papers to search
    entries, complete = catalog.ledger_since(("index", "fulltext"), between, limit=10)
    assert set(entries) == {"a", "b", "c"} and complete == between
    asked = SavedQuestion(owner="jo", query="q", scope="all", last_run_at=between, best=0.7)
    assert sorted(since_last_run(asked, (entries, complete))) == ["a", "b", "c"]
    assert since_last_run(SavedQuestion(owner="jo", query="q", last_run_at=between), (entries, complete)) is None
    assert since_last_run(SavedQuestion(owner="jo", query="q", scope="mine", last_run_at=between, best=0.7),
                          (entries, complete)) is None  # fmt: skip
    entries, complete = catalog.ledger_since(("index", "fulltext"), between, limit=2)
    assert len(entries) == 2 and complete > between  # three came: the two newest read, complete from the second
    assert since_last_run(asked, (entries, complete)) is None  # so this question searches its whole scope
    catalog.close()


def _spent(engine) -> dict[tuple[str, str], list[tuple[int, int, bool]]]:
    from sqlmodel import Session, select

    from auth.models import LLMUsage

    found: dict[tuple[str, str], list[tuple[int, int, bool]]] = {}
    with Session(engine) as session:
        for row in session.exec(select(LLMUsage).order_by(LLMUsage.id)):
            found.setdefault((row.username, row.mode), []).append((row.prompt_tokens, row.completion_tokens,
                                                                   row.estimated))  # fmt: skip
    return found


def test_the_judge_spends_its_owners_daily_tokens(empty_instance, scripted):
    """A saved question's judge asks on its owner's behalf: the tokens the provider reports are written to the
    owner's day (SCHOLARLOOM_LLM_DAILY_TOKENS counts them as it counts chat turns), and a user whose day is spent
    is not asked for."""
    from auth.usage import record_usage, tokens_today
    from harness.llm_server import text

    settings = empty_instance
    settings.llm, settings.llm_api_base, settings.llm_api_key = "openai/scripted", scripted.api_base, SecretStr("k")
    settings.llm_daily_tokens = 50
    engine = settings.catalog().engine
    record_usage(engine, "kim", "openai/scripted", "answered", 40, 10)  # kim's day is spent
    analyst = settings.analyst()
    assert analyst.for_user("kim") is None and analyst.for_user("jo") is not None
    scripted.enqueue(text('{"relation": "supports", "text": "It agrees [1]."}'))
    answer = analyst.for_user("jo")([{"role": "system", "content": "Weigh the texts."},
                                     {"role": "user", "content": "Question: graphs"}])  # fmt: skip
    assert '"supports"' in answer and len(scripted.requests) == 1
    assert _spent(engine)["jo", "saved question"] == [(5, 6, False)]  # the stand-in's count: a token a word
    assert tokens_today(engine, "jo") == 11 and tokens_today(engine, "kim") == 50
