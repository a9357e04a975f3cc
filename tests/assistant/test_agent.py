"""Whole turns: the real litellm client against a scripted server on 127.0.0.1, and retrieval-only mode."""

import re
from dataclasses import replace

from assistant.agent import Agent
from assistant.llm import LLMConfig, llm_retrier
from assistant.retrieval_only import NOTICE
from assistant.tools import SourceBook, ToolDeps
from harness.llm_server import text, tool_call

CANONICAL = "/papers/2006.07357-hindsight-logging-for-model-training"


class RecordingUI:
    """What a user would see: tool steps, streamed text, the final message and its cards."""

    def __init__(self) -> None:
        self.steps: list[dict] = []
        self.streamed: list[str] = []
        self.final: str | None = None
        self.cards = []
        self.checked: list[int] = []  # the sentences sent back to the model, each time the check did

    async def checking(self, sentences):
        self.checked.append(sentences)

    async def tool_started(self, name, arguments):
        self.steps.append({"name": name, "arguments": arguments})
        return len(self.steps) - 1

    async def tool_finished(self, handle, result):
        self.steps[handle]["output"] = result.output

    async def stream(self, chunk):
        self.streamed.append(chunk)

    async def finish(self, answer, cards):
        self.final, self.cards = answer, cards


class Pauses(list):
    """The retry pauses a turn asked for, recorded instead of slept."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def agent_for(server, pauses: Pauses | None = None) -> Agent:
    config = LLMConfig(model="openai/scripted", api_base=server.api_base, api_key="test-key", timeout=20)
    return Agent(config, max_tool_rounds=3, retrier=llm_retrier(async_sleep=pauses if pauses is not None else Pauses()))


async def test_streamed_tool_call_then_cited_answer(demo, scripted):
    scripted.enqueue(
        tool_call("search_papers", query="replay log statements from checkpoints after training", limit=3),
        text("Hindsight logging adds log statements after training and replays them from checkpoints [1]."),
    )
    deps = ToolDeps(demo.archive(), user="alice")
    ui, history = RecordingUI(), []
    outcome = await agent_for(scripted).turn(deps, history, "How can I add logging after training has finished?", ui)

    # The tool ran with the arguments the model streamed in pieces.
    assert ui.steps[0]["name"] == "search_papers"
    assert ui.steps[0]["arguments"]["query"] == "replay log statements from checkpoints after training"
    assert "[1] Hindsight Logging for Model Training" in ui.steps[0]["output"]
    # The answer streamed word by word, then became a message whose [1] links to the paper page.
    assert len(ui.streamed) > 5 and "".join(ui.streamed).startswith("Hindsight logging adds")
    assert f"[\\[1\\]]({CANONICAL})" in ui.final
    assert re.search(
        r"\*\*Sources\*\*\s+1\. \[Hindsight Logging for Model Training\]\(" + re.escape(CANONICAL), ui.final
    )
    assert [c.id for c in ui.cards] == ["2006.07357"] and outcome.citations == [1]
    # The model received the tools, then the tool result in the second request.
    first, second = scripted.requests
    from assistant.tools import TOOLS

    assert first["stream"] is True and [t["function"]["name"] for t in first["tools"]] == [t.__name__ for t in TOOLS]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert "2006.07357" in tool_messages[0]["content"]
    assert history == [] and outcome.messages()[-1] == {"role": "assistant", "content": outcome.text}


async def test_a_follow_up_stands_alone_in_the_words_it_was_searched_with(demo, scripted):
    """What "Watch this" saves after a follow-up: the model's search words, which stand on their own; the user's
    own words for a first question, or for a turn that searched nothing."""
    from assistant.turn import standalone

    scripted.enqueue(
        tool_call("search_papers", query="hindsight logging for model training", limit=3),
        text("Hindsight logging replays log statements from checkpoints [1]."),
        tool_call("search_papers", query="flor record replay overhead of hindsight logging", limit=3),
        text("Its overhead is small [1]."),
        text("Its overhead is small [1]."),  # the check does not find it: sent back once, the model keeps it
        text("Glad it helped."),
    )
    deps, agent = ToolDeps(demo.archive(), user="alice"), agent_for(scripted)
    first = await agent.turn(deps, [], "How can I add logging after training?", RecordingUI())
    history = first.messages()
    second = await agent.turn(deps, history, "and  what does it cost?", RecordingUI())
    third = await agent.turn(deps, [*history, *second.messages()], "thanks", RecordingUI())
    assert first.searched == "hindsight logging for model training"
    assert standalone("How can I add logging after training?", first, follows=False) == \
        "How can I add logging after training?"  # fmt: skip
    assert standalone("and  what does it cost?", second, follows=True) == \
        "flor record replay overhead of hindsight logging"  # fmt: skip
    assert third.searched is None and standalone("thanks", third, follows=True) == "thanks"


async def test_model_made_up_links_are_dropped(demo, scripted):
    made_up = "See [this page](https://evil.example/steal) and ![x](https://evil.example/p.png) [7]."
    scripted.enqueue(text(made_up), text(made_up))  # (a number no tool gave is found nowhere: sent back once)
    deps = ToolDeps(demo.archive(), sources=SourceBook())
    ui = RecordingUI()
    await agent_for(scripted).turn(deps, [], "hello", ui)
    assert "evil.example" not in ui.final and "this page" in ui.final and "\\[7\\]" in ui.final
    assert "*(not found in \\[7\\])*" in ui.final and ui.checked == [1]


async def test_tool_rounds_are_capped(demo, scripted):
    scripted.enqueue(*[tool_call("search_papers", query=f"graphs {n}") for n in range(3)], text("Done."))
    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    outcome = await agent_for(scripted).turn(deps, [], "loop", ui)
    assert outcome.tool_calls == 3 and ui.final == "Done."
    assert "tools" not in scripted.requests[-1] or not scripted.requests[-1]["tools"]


async def test_llm_down_gives_a_clear_message(demo):
    pauses = Pauses()
    config = LLMConfig(model="openai/scripted", api_base="http://127.0.0.1:9/v1", api_key="x", timeout=2)
    agent = Agent(config, retrier=llm_retrier(async_sleep=pauses))
    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    outcome = await agent.turn(deps, [], "anything", ui)
    assert outcome.error and ui.final.startswith("**The language model could not answer**: the model's server at "
                                                 "http://127.0.0.1:9/v1 cannot be reached (is it running?)")
    assert len(pauses) == 2 and 0.25 <= pauses[0] <= 0.75 and 0.5 <= pauses[1] <= 1.5  # backing off, bounded


async def test_retrieval_only_mode(demo):
    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    outcome = await Agent(None).turn(deps, [], "replay log statements from checkpoints after training", ui)
    assert ui.final.startswith(NOTICE) and "SCHOLARLOOM_LLM" in ui.final
    assert ui.steps[0]["name"] == "search_papers" and outcome.cards[0].id == "2006.07357"
    assert outcome.cards[0].path == CANONICAL and outcome.cards[0].quotes  # the paper and its sentences: on its card
    # ... once: the text says what was found and how to read the cards, without repeating them
    assert f"**{len(outcome.cards)} papers** match" in ui.final
    assert not [c for c in outcome.cards if c.title in ui.final or any(q.text in ui.final for q in c.quotes)]


async def test_retrieval_only_says_when_nothing_here_answers_and_shows_only_what_clears_the_floor(demo):
    """Issue 39: a subject the archive does not hold gets "Nothing in this archive answers this well", its cards
    labelled as the closest matches, and what the user can do; the tool tells the model the evidence is weak. A
    question the archive answers shows only the papers that clear the relevance floor."""
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "coral reef bleaching under ocean warming", ui)
    assert "Nothing in this archive answers" in ui.final and "closest match" in ui.final and "arXiv id" in ui.final
    assert outcome.weak and "weak evidence" in ui.steps[0]["output"] and "match** " not in ui.final
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "hindsight logging for model training", ui)
    assert outcome.cards[0].id == "2006.07357" and "Nothing in this archive" not in ui.final
    shown = {c.id for c in outcome.cards}
    floor = {h.paper.id for h in demo.archive().search("hindsight logging for model training", limit=5).hits
             if h.clears}  # fmt: skip
    assert shown == floor and len(shown) < 5  # the weaker matches are left out, and the tool says so
    assert "weaker match" in ui.steps[0]["output"]


async def test_retrieval_only_leads_with_the_answer_sentence_and_its_page(demo):
    """Issue 39: a fact asked without a model is answered first by the words that hold it, quoted as they stand
    with the paper's number and page (here table 1's row), then the one paper found; no unrelated card."""
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [],
                                     "What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", ui)  # fmt: skip
    assert [c.id for c in outcome.cards] == ["2005.02877"]
    n = outcome.cards[0].number
    lead, found = ui.final.index("own words"), ui.final.index("** matches **")
    assert lead < found  # the answer first, then what was found
    assert re.search(rf"\[{n}, p\. 6\] \[TripPy", ui.final[lead:found])
    assert "> … TripPy 55.29±0.28% Table 1: DST Results on MultiWOZ 2.1" in ui.final[lead:found]
    assert outcome.lead is not None and outcome.lead.evidence.page == 6
    # WOZ 2.0's row is TripPy's fifth best passage for its question, past the three a paper shows: still weighed
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [],
                                     "What joint goal accuracy does TripPy reach on WOZ 2.0?", ui)  # fmt: skip
    assert outcome.lead is not None and outcome.lead.evidence.page == 6
    assert "TripPy 92.7±0.2% Table 2: DST Results on WOZ 2.0." in outcome.lead.quote
    assert ui.final.index("own words") < ui.final.index("TripPy 92.7±0.2%") < ui.final.index("** matches **")
    # SPECTER's "Adam optimizer" passage is found by its paper's passages asked without the paper's own name
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "Which optimizer does SPECTER use?", RecordingUI())
    assert outcome.lead is not None and outcome.lead.evidence.page == 5
    assert outcome.lead.quote.startswith("For training, we use the Adam optimizer (Kingma and Ba, 2014)")
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "What is the boiling point of liquid argon?", ui)
    assert outcome.lead is None and "own words" not in ui.final and "Nothing in this archive answers" in ui.final


async def test_retrieval_only_says_who_wrote_the_paper_a_question_names(demo):
    """"Who wrote SPECTER?": the paper whose title leads with it, its authors from the catalog, first. ELMo's paper
    ("Deep contextualized word representations") names it in its text: "we call them ELMo". Not the paper whose
    title only mentions what was asked ("... Interactive Dialog with DialoGPT"), nor one that builds on it ("we
    propose ... based on BERT"). The name is searched alone: the question's other words only blur it."""
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "Who wrote SPECTER?", ui)
    n = outcome.cards[0].number
    assert outcome.cards[0].id == "2004.07180"
    written = ui.final.index(f"**Written by** Arman Cohan, Sergey Feldman, Iz Beltagy, Doug Downey and Daniel S. Weld: "
                             f"[{n}] [SPECTER: Document-level")  # fmt: skip
    assert written < ui.final.index("** matches **")
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "Who introduced ELMo?", ui)
    assert outcome.cards[0].id == "1802.05365"
    peters = ("**Written by** Matthew E. Peters, Mark Neumann, Mohit Iyyer, Matt Gardner, Christopher Clark, Kenton "
              f"Lee and Luke Zettlemoyer: [{outcome.cards[0].number}] [Deep contextualized")
    assert peters in ui.final
    # the name searched alone: "Who wrote CTIGuardian?" scored its paper under every cut (0.14)
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "Who wrote CTIGuardian?", ui := RecordingUI())
    assert outcome.cards[0].id == "2512.12914" and ui.steps[0]["arguments"]["query"] == "CTIGuardian"
    assert "**Written by** Shashie Dilhara Batan Arachchige, Benjamin Zi Hao Zhao, Hassan Jameel Asghar" in ui.final
    for question, best in (("Who wrote DialoGPT?", "2006.12719"), ("Who wrote BERT?", None),
                           ("Who wrote ELMo's baseline model?", "1802.05365")):  # (another work's authors)
        ui = RecordingUI()
        outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], question, ui)
        assert best is None or outcome.cards[0].id == best
        assert "Written by" not in ui.final


async def test_retrieval_only_answers_a_name_its_encoder_does_not_know_with_the_paper_named_after_it(demo):
    """"What is TinyBERT?" said nothing here answered it (the encoder scores TinyBERT's paper at 0.33); now its
    paper is the one card, and, as its abstract never says what TinyBERT is, its title leads as the definition. An
    abstract that does say it still leads ("PyTerrier is a Python-based retrieval framework ...")."""
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "What is TinyBERT?", ui)
    assert [c.title for c in outcome.cards] == ["TinyBERT: Distilling BERT for Natural Language Understanding"]
    assert not outcome.weak and "Nothing in this archive" not in ui.final
    assert outcome.lead is not None and outcome.lead.quote == outcome.cards[0].title
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "What is PyTerrier?", ui)
    assert outcome.lead is not None and outcome.lead.quote.startswith("PyTerrier is a Python-based retrieval")



async def test_retrieval_only_answers_what_a_name_is_where_the_archive_spells_it_out(demo):
    """"What is SQuAD?" said nothing here answered it: the encoder does not know the name, and no paper is named
    after it. ELMo's p. 4 spells it out ("The Stanford Question Answering Dataset (SQuAD) ... contains 100K+ ...
    question-answer pairs"): that sentence leads, as a definition (a list's "and SQuAD, the" on p. 8 is none), and
    the answer says how the name was read. The model is told too."""
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "What is SQuAD?", ui)
    assert not outcome.weak and [c.id for c in outcome.cards] == ["1802.05365"]
    assert outcome.lead is not None and outcome.lead.evidence.page == 4
    assert "Stanford Question Answering Dataset (SQuAD)" in outcome.lead.quote and "100K+" in outcome.lead.quote
    assert '(read "SQuAD" as "Stanford Question Answering Dataset", as papers in this archive spell it out)' in ui.final
    steps = {step["name"]: step["output"] for step in ui.steps}
    assert 'Read "SQuAD" as "Stanford Question Answering Dataset"' in steps["search_papers"]

async def test_retrieval_only_lists_the_named_researchers_papers_first(demo):
    ui = RecordingUI()
    outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], "papers by Joseph M. Hellerstein", ui)
    assert ui.steps[0]["name"] == "search_papers" and outcome.cards[0].id == "2006.07357"
    assert "researcher named come first" in ui.final


async def test_retrieval_only_reads_a_mentioned_paper(demo):
    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "What is 2006.07357 about?", ui)
    assert ui.steps[0] == {
        "name": "get_paper",
        "arguments": {"paper_id": "2006.07357"},
        "output": ui.steps[0]["output"],
    }
    assert "Bobby Yan" in ui.final


async def test_starter_questions_find_their_papers(demo):
    from assistant.turn import STARTERS

    expected = {"Logging after training": "2006.07357", "Graph convolutions": "1609.02907",
                "One paper": "2006.07357", "Particle physics": "0704.0001", "A researcher": "2006.07357",
                "An institution": "openalex:W2936368166", "Inside a paper": "2004.07180"}  # fmt: skip
    for label, question in STARTERS:
        ui = RecordingUI()
        outcome = await Agent(None).turn(ToolDeps(demo.archive()), [], question, ui)
        assert next(c for c in outcome.cards if c.kind == "paper").id == expected[label], label
        if label == "Inside a paper":  # answered from the PDF's text, with the page it is on
            assert re.search(r"- \[1, p\. \d+\] \[SPECTER[^\]]*\]\(/papers/2004\.07180", ui.final), ui.final
    assert outcome.cards  # (the researcher starter's answer also carries the researcher's own card)


async def test_retrieval_only_answers_about_a_researcher_or_an_institution(demo):
    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "What does Bobby Yan work on?", ui)
    assert ui.steps[0]["name"] == "summarize_researcher" and ui.final.startswith(NOTICE)
    assert "Bobby Yan has 1 paper in this archive (2020); mostly in cs.DC (1)" in ui.final
    assert f"1. [Hindsight Logging for Model Training]({CANONICAL}) (2020)" in ui.final
    assert re.search(r"\[Open the profile\]\(/researchers/\d+-bobby-yan\)", ui.final)
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "Who at MIT has papers here?", ui)
    assert ui.steps[0]["name"] == "summarize_institution"
    assert "Massachusetts Institute of Technology (Cambridge, United States) has 4 papers" in ui.final
    ui = RecordingUI()  # a topic question that names an institution is still a paper search
    await Agent(None).turn(deps, [], "Papers from MIT on point clouds", ui)
    assert ui.steps[0]["name"] == "search_papers"


async def test_provider_error_after_retries_gives_a_clear_message(demo, scripted):
    # Nothing scripted: the stand-in answers 500 to every request, as a failing provider would.
    pauses = Pauses()
    agent = agent_for(scripted, pauses)
    ui = RecordingUI()
    outcome = await agent.turn(ToolDeps(demo.archive()), [], "anything", ui)
    assert outcome.error and ui.final.startswith("**The language model could not answer**: the model's server at "
                                                 f"{scripted.api_base} failed (500)")
    assert len(scripted.requests) == 3 and len(pauses) == 2  # the first try and two bounded retries


async def test_rate_limited_provider_is_retried_after_its_retry_after(demo, scripted):
    """429 with Retry-After: 1 -> the next try comes no sooner than a second later and the answer arrives."""
    from harness.llm_server import failure

    scripted.enqueue(failure(429, retry_after="1"), failure(503), text("Here it is."))
    ui = RecordingUI()
    pauses = Pauses()
    deps = ToolDeps(demo.archive())
    outcome = await agent_for(scripted, pauses).turn(deps, [], "q", ui)
    assert outcome.error is None and ui.final == "Here it is."
    # The provider's second (plus up to 10%, so refused clients do not all return at once), then a back-off.
    assert len(scripted.requests) == 3 and 1.0 <= pauses[0] <= 1.1 and 0.5 <= pauses[1] <= 1.5


async def test_a_provider_asking_for_a_long_pause_gets_a_clear_message_at_once(demo, scripted):
    from harness.llm_server import failure

    scripted.enqueue(failure(429, retry_after="3600"))
    ui = RecordingUI()
    pauses = Pauses()
    outcome = await agent_for(scripted, pauses).turn(ToolDeps(demo.archive()), [], "q", ui)
    assert outcome.error and ui.final.startswith("**The language model could not answer**: the model's provider is "
                                                 "limiting requests (429)")
    assert len(scripted.requests) == 1 and pauses == []


async def test_retrieval_only_follow_ups_resolve_she_and_it(demo):
    """Without a model, "who else did she write with?" and "what cites it?" are about the last answer's cards."""
    from assistant.tools import Card

    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "What does Bobby Yan work on?", ui)
    person = next(c for c in ui.cards if c.kind == "researcher")
    deps = replace(deps, focus=tuple(ui.cards))
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "Who else did she write with?", ui)
    assert ui.steps[0] == {**ui.steps[0], "name": "get_researcher", "arguments": {"researcher_id": int(person.id)}}
    assert f"Co-authors of **[{person.title}]" in ui.final and "shared paper" in ui.final
    flor = Card("paper", "2006.07357", "Hindsight Logging for Model Training", "/papers/2006.07357")
    deps = replace(deps, focus=(flor,))
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "What cites it?", ui)
    assert ui.steps[0]["name"] == "get_cited_by" and ui.steps[0]["arguments"] == {"paper_id": "2006.07357"}
    deps = replace(deps, focus=())
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "Who else did she write with?", ui)
    assert ui.steps[0]["name"] == "search_papers"  # nothing to resolve "she" against: a plain search


async def test_retrieval_only_questions_about_it_are_about_the_paper_just_shown(demo):
    """Without a model, "How many layers does it have?" after "What is TinyBERT?" searched "it": ELMo's paper
    answered. Now "it" names the paper the last answer showed first, by its title's name ("TinyBERT: ...") or its
    whole title; "Who wrote it?" gives that paper's authors and keeps it shown, so "What cites it?" stays on it.
    After an answer that found nothing that answers well, "it" is not resolved against its closest matches."""
    from assistant.conversation import Chat, Conversation

    chat = Chat(Agent(None), demo.archive(), "alice", Conversation())
    tiny = await chat.ask("What is TinyBERT?", RecordingUI())
    assert tiny.cards[0].id == "openalex:W3105966348"
    ui = RecordingUI()
    layers = await chat.ask("How many layers does it have?", ui)
    assert ui.steps[0]["arguments"]["query"] == "How many layers does TinyBERT have?"
    assert layers.cards[0].id == tiny.cards[0].id
    ui = RecordingUI()
    written = await chat.ask("Who wrote it?", ui)
    assert ui.steps == [] and [c.id for c in written.cards] == [tiny.cards[0].id]
    assert f"**Written by** Xiaoqi Jiao, Yichun Yin, Lifeng Shang, Xin Jiang, Xiao Dong Chen, Linlin Li, Fang Wang " \
           f"and Qun Liu: [{tiny.cards[0].number}] [TinyBERT" in written.text  # fmt: skip
    ui = RecordingUI()
    await chat.ask("What cites it?", ui)
    assert ui.steps[0]["name"] == "get_cited_by" and ui.steps[0]["arguments"] == {"paper_id": tiny.cards[0].id}
    ui = RecordingUI()
    other = await chat.ask("Who wrote its teacher model?", ui)  # (not TinyBERT's authors: a search for the rest)
    assert ui.steps[0]["name"] == "search_papers" and "Xiaoqi Jiao" not in other.text
    await chat.ask("What is TinyBERT?", RecordingUI())
    elmo = await chat.ask("What is ELMo?", RecordingUI())
    ui = RecordingUI()
    await chat.ask("How many units do its biLSTM layers have?", ui)
    assert elmo.cards[0].id == "1802.05365" and ui.steps[0]["arguments"]["query"] == (
        """How many units do "Deep contextualized word representations"'s biLSTM layers have?""")
    for other in ("Who wrote the paper on dialog evaluation?", "Is it true that transformers beat RNNs?"):
        ui = RecordingUI()
        answer = await chat.ask(other, ui)  # ("the paper on ...", "it" of "is it true": not ELMo's paper)
        assert ui.steps[0]["name"] == "search_papers" and ui.steps[0]["arguments"]["query"] == other
        assert "Mark Neumann" not in answer.text
        await chat.ask("What is ELMo?", RecordingUI())
    closest = await chat.ask("coral reef bleaching under ocean warming", RecordingUI())
    assert closest.weak and chat.conversation.focus_weak
    ui = RecordingUI()
    unresolved = await chat.ask("Who wrote it?", ui)
    assert "Written by" not in unresolved.text and ui.steps[0]["name"] == "search_papers"
    assert ui.steps[0]["arguments"]["query"] == "Who wrote it?"


async def test_retrieval_only_what_else_did_they_write_is_their_work(demo):
    deps = ToolDeps(demo.archive())
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "What does Bobby Yan work on?", ui)
    deps = replace(deps, focus=tuple(ui.cards))
    person = next(c for c in ui.cards if c.kind == "researcher")
    ui = RecordingUI()
    await Agent(None).turn(deps, [], "What else did they write?", ui)
    expected = {"name": "summarize_researcher", "arguments": {"researcher_id": int(person.id)}}
    assert ui.steps[0] == {**ui.steps[0], **expected}
    assert "Bobby Yan has" in ui.final


async def test_the_full_text_starter_is_answered_from_a_page_with_the_scripted_llm(demo, scripted):
    from assistant.turn import STARTERS

    question = dict(STARTERS)["Inside a paper"]
    best = demo.archive().passages("SPECTER citation graph document embeddings", limit=1).hits[0]
    assert best.paper.id == "2004.07180"
    scripted.enqueue(
        tool_call("search_fulltext", query="SPECTER citation graph document embeddings", limit=3),
        text(f"SPECTER pretrains a Transformer so that papers which cite each other embed close [1, p. {best.page}]."),
    )
    ui = RecordingUI()
    outcome = await agent_for(scripted).turn(ToolDeps(demo.archive()), [], question, ui)
    tool_result = [m for m in scripted.requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert f"[1, p. {best.page}" in tool_result  # the page came from the PDF's passages, not from the model
    assert re.search(rf"\[\\\[1, p\. {best.page}\\\]\]\(/papers/2004\.07180[^)]*\)", ui.final), ui.final
    assert outcome.citations == [1] and [c.id for c in ui.cards] == ["2004.07180"]
