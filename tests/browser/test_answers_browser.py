"""Answers without a model, in a real browser (issue 39): the demo served as `make demo` serves it, with no language
model, asked as a new user would. A fact leads with the words that hold it and their page, with no unrelated card;
a subject the archive does not hold is said to be absent; a person's papers come first after other questions.
Screenshots go to test-artifacts/browser/."""

from __future__ import annotations

import pytest

from auth.accounts import add_user, clear_sign_in_failures, create_tables
from harness.serve import served
from scholarloom.settings import Settings
from tests.browser.conftest import require_chromium, screenshot, shot_on_failure, signed_in
from tests.conftest import REPO
from tests.demo_cache import copy_live_data

SHOTS = REPO / "test-artifacts" / "browser"
PASSWORD = "browser answers password"
require_chromium()
SHOTS.mkdir(parents=True, exist_ok=True)

# The text of the page's last answer, and the ids of its cards in the order the page shows them.
LAST_ANSWER = """() => {
  const answers = [...document.querySelectorAll('[data-step-type="assistant_message"]')];
  const last = answers[answers.length - 1];
  return last ? {text: last.innerText, cards: [...last.querySelectorAll('.scholar-card')].map(c => c.dataset.id),
                 done: !!last.querySelector('.answer-actions')} : null;
}"""


@pytest.fixture(scope="module")
def search_only(demo, tmp_path_factory):
    """`scholarloom serve` on a copy of the loaded demo with no language model configured, as `make demo` runs."""
    data_dir = tmp_path_factory.mktemp("answers-demo")
    copy_live_data(demo.data_dir, data_dir, "chat-files")
    engine = Settings(data_dir=data_dir).catalog().engine
    create_tables(engine)
    clear_sign_in_failures(engine)
    add_user(engine, "erin", PASSWORD, replace=True)
    engine.dispose()
    with served(data_dir, SCHOLARLOOM_LLM="") as (base, _process):
        yield base


def _ask(page, question: str, expected: str, cards: int = 1) -> dict:
    """Ask, and wait until the last answer says `expected`, has its actions and at least `cards` cards (the server
    sends the cards before the actions, but the page may draw them after), then a moment more for any other card."""
    page.click("#chat-input")
    page.keyboard.type(question)
    page.locator("#chat-submit:not([disabled])").click(timeout=30_000)
    done = (f"(() => {{ const a = ({LAST_ANSWER})(); "
            f"return a && a.done && a.text.includes({expected!r}) && a.cards.length >= {cards}; }})()")  # fmt: skip
    page.wait_for_function(done, timeout=30_000)
    page.wait_for_timeout(500)
    return page.evaluate(LAST_ANSWER)


def test_a_fact_an_absent_subject_and_a_persons_papers_without_a_model(search_only, browser):
    context, page = signed_in(browser, search_only, "erin", PASSWORD)
    with shot_on_failure(page, SHOTS / "answers-failed.png"):
        fact = _ask(page, "What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", "own words")
        text = fact["text"]
        assert "Retrieval-only mode" in text
        # It leads with table 1's line, quoted with its paper's number and page, before what was found ...
        lead, found = text.index("own words"), text.index("1 paper matches")
        assert lead < found and ", p. 6] TripPy" in text[lead:found]
        assert "TripPy 55.29±0.28% Table 1: DST Results on MultiWOZ 2.1" in text[lead:found]
        # ... and the one card is TripPy's: no unrelated card follows.
        assert fact["cards"] == ["2005.02877"], fact["cards"]
        screenshot(page, SHOTS / "answers-01-fact.png", full_page=True)

        absent = _ask(page, "coral reef bleaching under ocean warming", "Nothing in this archive")
        assert "Nothing in this archive answers" in absent["text"] and "closest match" in absent["text"]
        assert "own words" not in absent["text"]
        screenshot(page, SHOTS / "answers-02-absent.png", full_page=True)

        person = _ask(page, "papers by Joseph Hellerstein", "researcher named")
        assert person["cards"] and person["cards"][0] == "2006.07357", person["cards"]  # his paper first
        assert "researcher named come first" in person["text"]
        screenshot(page, SHOTS / "answers-03-person.png", full_page=True)
    context.close()
