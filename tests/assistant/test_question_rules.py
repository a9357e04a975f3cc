"""The question's rules (`assistant.reading.RULES`): for every rule, questions that must read as its intent and a few
near misses that must not, from the assistant's tests and the judged questions (tests/fixtures/judged_questions.jsonl),
each read against the focus the conversation had when it was asked."""

import json

import pytest

from assistant.reading import RULES, Intent, read_question
from assistant.tools import Card
from tests.conftest import REPO

TINYBERT = Card("paper", "openalex:W3105966348", "TinyBERT: Distilling BERT for Natural Language Understanding",
                "/papers/openalex:W3105966348", number=1)  # fmt: skip
ELMO = Card("paper", "1802.05365", "Deep contextualized word representations", "/papers/1802.05365", number=2)
FLOR = Card("paper", "2006.07357", "Hindsight Logging for Model Training", "/papers/2006.07357", number=3)
BOBBY_YAN = Card("researcher", "5499", "Bobby Yan", "/people/5499-bobby-yan")
# What the last answer showed: (its cards, whether they were only the closest matches)
FOCUS = {
    "nothing": ((), False),
    "a paper": ((TINYBERT,), False),
    "ELMo": ((ELMO,), False),
    "papers": ((TINYBERT, ELMO, FLOR), False),
    "a researcher": ((BOBBY_YAN, FLOR), False),
    "closest matches": ((TINYBERT, ELMO), True),
}

EXAMPLES = {
    Intent.COMPARE: [
        ("Compare 2004.07180, 1802.05365 and 2005.02877 on task and data set", "nothing"),
        ("2004.07180 vs 1802.05365", "nothing"),
        ("compare them on data set", "papers"),
        ("How do they compare in terms of method?", "papers"),
        ("what are the differences between them?", "papers"),
    ],
    Intent.WHICH_TO_COMPARE: [
        ("compare them", "closest matches"),
        ("How do they compare on method?", "a paper"),
        ("compare them", "nothing"),
    ],
    Intent.PAPER: [
        ("What is 2006.07357 about?", "nothing"),
        ("get 2005.02877", "papers"),
        ("compare 2004.07180 with prior work", "nothing"),  # (one paper named: nothing to compare it with)
    ],
    Intent.WHO_WROTE_IT: [
        ("Who wrote it?", "a paper"),
        ("Who wrote this paper?", "papers"),
        ("Who proposed the paper?", "a paper"),
    ],
    Intent.COAUTHORS: [
        ("Who else did she write with?", "a researcher"),
        ("Who are her co-authors?", "a researcher"),
        ("Who did he collaborate with?", "a researcher"),
    ],
    Intent.RESEARCHER: [
        ("What else did they write?", "a researcher"),
        ("Tell me about this researcher", "a researcher"),
    ],
    Intent.CITED_BY: [
        ("What cites it?", "a paper"),
        ("Who cites this paper?", "papers"),
        ("What work followed up on it?", "a paper"),
    ],
    Intent.REFERENCES: [
        ("What does it build on?", "a paper"),
        ("What are its references?", "a paper"),
    ],
    Intent.PROFILE: [
        ("What does Bobby Yan work on?", "nothing"),
        ("Who at MIT has papers here?", "nothing"),
        ("Jure Leskovec", "nothing"),
        ("Simone Teufel's papers", "nothing"),
        ("Stanford University", "a paper"),
    ],
    Intent.WHO_WROTE: [
        ("Who wrote SPECTER?", "nothing"),
        ("Who introduced ELMo?", "nothing"),
        ("Who wrote CTIGuardian?", "nothing"),
        ("Who wrote its teacher model?", "a paper"),  # (a search for TinyBERT's teacher, not TinyBERT's authors)
        ("Who developed Pyserini?", "nothing"),
    ],
    Intent.FACT: [
        ("Which optimizer does SPECTER use?", "nothing"),
        ("What is TinyBERT?", "nothing"),
        ("How many layers does it have?", "a paper"),
        ("What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", "nothing"),
        ("How much does ELMo improve the test F1 on SQuAD?", "nothing"),
        ("What has Iz Beltagy written?", "nothing"),
    ],
    Intent.TOPIC: [
        ("hindsight logging for model training", "nothing"),
        ("coral reef bleaching under ocean warming", "papers"),
        ("papers by Joseph M. Hellerstein", "nothing"),
        ("Papers from MIT on point clouds", "nothing"),
        ("Is it true that transformers beat RNNs?", "ELMo"),
        ("Who wrote the paper on dialog evaluation?", "ELMo"),
    ],
}

# Questions that look like a rule's but must not read as it
NEAR_MISSES = {
    Intent.COMPARE: [("Compare SPECTER and ELMo", "nothing"), ("compare them", "closest matches")],
    Intent.PAPER: [("papers from 2006 on logging", "nothing")],
    Intent.WHO_WROTE_IT: [("Who wrote it?", "closest matches"), ("Who wrote it?", "nothing"),
                          ("Who wrote its teacher model?", "a paper")],
    Intent.COAUTHORS: [("Who else did she write with?", "nothing"), ("Who else did she write with?", "papers")],
    Intent.RESEARCHER: [("What else did they write?", "papers")],
    Intent.CITED_BY: [("What cites it?", "closest matches"), ("Is it cited often in the paper on dialog?", "nothing"),
                      ("Who cites her?", "a researcher")],
    Intent.REFERENCES: [("What does it build on?", "nothing")],
    Intent.PROFILE: [("papers by Arman Cohan", "nothing"), ("Papers from MIT on point clouds", "nothing")],
    Intent.WHO_WROTE: [("Who wrote it?", "nothing"), ("Who wrote the paper on dialog evaluation?", "nothing")],
    Intent.FACT: [("How can I log after training?", "nothing"), ("Who wrote SPECTER?", "nothing")],
}  # fmt: skip


def _read(question: str, focus: str):
    cards, weak = FOCUS[focus]
    return read_question(question, cards, weak)


def test_every_rule_has_examples_and_every_example_a_rule():
    assert [rule.intent for rule in RULES] == list(Intent)
    assert set(EXAMPLES) == set(Intent)
    assert all(EXAMPLES[intent] for intent in Intent)
    assert set(NEAR_MISSES) <= set(Intent) - {Intent.TOPIC, Intent.WHICH_TO_COMPARE}


@pytest.mark.parametrize(("intent", "question", "focus"),
                         [(i, q, f) for i, examples in EXAMPLES.items() for q, f in examples])  # fmt: skip
def test_a_question_reads_as_its_rule(intent, question, focus):
    read = _read(question, focus)
    assert read.intent == intent, (question, focus, read.intents)
    assert read.intents[-1] == Intent.TOPIC  # a search answers when nothing before it does


@pytest.mark.parametrize(("intent", "question", "focus"),
                         [(i, q, f) for i, misses in NEAR_MISSES.items() for q, f in misses])  # fmt: skip
def test_a_near_miss_does_not_read_as_the_rule(intent, question, focus):
    assert _read(question, focus).intent != intent


def test_the_judged_topics_and_facts_read_as_such():
    """The judged questions: every topic and absent one is a search, every fact one asks for a fact."""
    judged = [json.loads(line) for line in (REPO / "tests/fixtures/judged_questions.jsonl").read_text().splitlines()]
    for item in judged:
        read = read_question(item["question"])
        if item["kind"] in ("topic", "absent"):
            assert read.intents == (Intent.TOPIC,), item["question"]
        elif item["kind"] == "fact":
            assert read.intent == Intent.FACT and read.wants is not None, item["question"]


def test_what_a_question_names_is_read_with_it():
    compared = _read("Compare 2004.07180, 1802.05365 and 2005.02877 on task and data set", "nothing")
    assert compared.compared == ("2004.07180", "1802.05365", "2005.02877")
    assert compared.aspects == ("task", "data set")
    assert _read("compare them", "papers").compared == (TINYBERT.id, ELMO.id, FLOR.id)
    assert _read("What is 2006.07357 about?", "nothing").arxiv_ids == ("2006.07357",)
    who = _read("Who wrote CTIGuardian?", "nothing")
    assert who.searched == "CTIGuardian" and who.authors_named == ("ctiguardian",)
    assert _read("Who wrote its teacher model?", "a paper").authors_named == ()  # another work's authors
    person = _read("Who else did she write with?", "a researcher")
    assert person.person == BOBBY_YAN and person.paper == FLOR
    assert _read("Who at MIT has papers here?", "nothing").named_places == ("MIT",)
    assert _read("What does Bobby Yan work on?", "nothing").named_people == ("Bobby Yan",)


def test_it_names_the_paper_just_shown_and_the_fact_wanted_is_of_it():
    layers = _read("How many layers does it have?", "a paper")
    assert layers.searched == layers.query == "How many layers does TinyBERT have?"
    assert layers.fact and layers.wants.wants_figure and "tinybert" in layers.wants.names
    units = _read("How many units do its biLSTM layers have?", "ELMo")
    assert units.searched == 'How many units do "Deep contextualized word representations"\'s biLSTM layers have?'
    assert _read("How many layers does it have?", "closest matches").searched == "How many layers does it have?"
    assert _read("Is it true that transformers beat RNNs?", "ELMo").searched == "Is it true that transformers beat RNNs?"
