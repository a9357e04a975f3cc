"""The answer sentence found without a model (issue 39), on passages as the demo's PDFs give them."""

from dataclasses import replace

from assistant.answer_line import Evidence, answer_line

# TripPy (2005.02877), p. 6: table 1's text as pypdf reads it, then the paragraph after it.
TABLE = (
    "Models MultiWOZ 2.1 DST-reader 36.40% DST-span 40.39% SUMBT 42.40%∗∗ TRADE 45.60% MA-DST 51.04% DS-DST 51.21% "
    "SOM-DST 52.57% DS-picklist 53.30% TripPy 55.29±0.28% Table 1: DST Results on MultiWOZ 2.1 in JGA (± denotes "
    "the standard deviation. ∗∗ MultiWOZ 2.0 result. for which all slots have been filled with the correct value "
    "according to the ground truth."
)
RESULTS = (
    "Tables 1, 3 and 2 show the performance of our model in comparison to various baselines. TripPy achieves "
    "state-of-the-art performance on all four evaluated datasets, with varying distance to the runner-up. Most "
    "notably, we were able to push the performance on MultiWOZ 2.1, the most complex task, by another 2.0% absolute "
    "compared to the previous top scoring method, achieving 55.3% JGA."
)
# TripPy p. 7: a figure's axis labels, then its caption.
FIGURE = (
    "9,8% 12,2% 39,0% 0% 10% 20% 30% Performance on slots with high OOV rate Slot accuracy Slot gate accuracy Span "
    "prediction accuracy OOV rate MultiWOZ 2.1 sim-M sim-R Figure 4: Performance of TripPy on slots with high OOV "
    "rate. ALL denotes the average of all slots of the respective dataset."
)
# FED (2006.12719), p. 3.
FED = (
    "A total of 124 conversations were annotated (40 Meena, 44 Mitsuku, 40 Human). In total, the FED dataset "
    "includes 3348 turn-level and 1364 dialog-level data points, for a total of 4712. Eighteen fine-grained dialog "
    "qualities are measured in the FED dataset: eight at the turn level and ten at the dialog level."
)
TRIPPY = "TripPy: A Triple Copy Strategy for Value Independent Neural Dialog State Tracking"
TRIPPY_ABSTRACT_END = (
    "Our approach combines the advantages of span-based slot filling methods with memory methods to avoid the use of "
    "value picklists altogether. We argue that our strategy simplifies the DST task while at the same time achieving "
    "state of the art performance on various popular evaluation sets including Multiwoz 2.1, where we achieve a "
    "joint goal accuracy beyond 55%."
)
FED_ABSTRACT_END = (
    "It also introduces the FED dataset which is constructed by annotating a set of human-system and human-human "
    "conversations with eighteen fine-grained dialog qualities. The FED metric (1) does not rely on a ground-truth "
    "response, (2) does not require training data and (3) measures fine-grained dialog qualities at both the turn "
    "and whole dialog levels."
)
SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
SPECTER_P6 = (
    "In a dataset of 4,113 clicks, we found that SPECTER ranker improved clickthrough rate over the baseline by "
    "46.5%, demonstrating its superiority. We emphasize that our citation-based pretraining objective is critical "
    "for the performance of SPECTER; removing this and using a vanilla SciB- ERT results in decreased performance on "
    "all tasks."
)
SPECTER_P7 = (
    "We observe that removing the abstract from the textual input and relying only on the title results in a "
    "substantial decrease in performance. More surprisingly, adding authors as an input (along with title and "
    "abstract) hurts performance.13 One possible explanation is that author names are sparse in the corpus, making "
    "it difficult for the model to infer document-level relatedness from them."
)
SPECTER_ABSTRACT = (
    "Representation learning is a critical ingredient for natural language processing systems. We propose SPECTER, "
    "a new method to generate document-level embedding of scientific documents based on pretraining a Transformer "
    "language model on a powerful signal of document-level relatedness: the citation graph."
)
SPECTER_P8 = (
    "We also include both easy and hard distractors as when training SPECTER (for hard negatives we choose the least "
    "non-zero co-viewed (co-read, or co-cited) papers)."
)


def test_a_table_row_is_quoted_as_it_stands_with_its_page():
    evidence = [Evidence(FIGURE, "2005.02877", 1, 7), Evidence(RESULTS, "2005.02877", 1, 6),
                Evidence(TABLE, "2005.02877", 1, 6)]  # fmt: skip
    line = answer_line("What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", evidence)
    assert line is not None and line.evidence.page == 6
    # the row and the table's caption, cut from the table's text with "…" where it was cut, never other words
    assert "TripPy 55.29±0.28% Table 1: DST Results on MultiWOZ 2.1 in JGA" in line.quote  # the measure's initials
    assert line.quote.startswith("… ") and line.quote.strip("… ") in " ".join(TABLE.split())
    # "Figure 4" and "(3)" are not figures that answer; "MultiWOZ 2.0" is not "WOZ 2.0"
    assert answer_line("What joint goal accuracy does TripPy reach on WOZ 2.0?", evidence) is None


def test_how_many_wants_the_counted_thing_beside_a_figure():
    evidence = [Evidence(FED, "2006.12719", 2, 3)]
    points = answer_line("How many data points does the FED dataset contain?", evidence)
    assert points is not None and "4712" in points.quote and points.quote.startswith("In total")
    qualities = answer_line("How many dialog qualities does the FED dataset annotate at the turn level?", evidence)
    assert qualities is not None and "eight at the turn level" in qualities.quote  # a count in words
    assert answer_line("How many annotators does the FED dataset have?", evidence) is None


def test_what_is_x_is_answered_by_the_sentence_that_defines_it_or_not_at_all():
    evidence = [Evidence(SPECTER_P8, "2004.07180", 3, 8), Evidence(SPECTER_ABSTRACT, "2004.07180", 3)]
    line = answer_line("What is SPECTER and how is it trained?", evidence)
    assert line is not None and line.evidence.page is None and line.quote.startswith("We propose SPECTER, a new")
    assert answer_line("What is SPECTER?", [Evidence(SPECTER_P8, "2004.07180", 3, 8)]) is None  # mentions, not defines
    future = ("To further improve the DST capabilities of TripPy, we hope to introduce slot independence as at present "
              "its tracking abilities are limited to slots that are predefined in the ontology.")  # TripPy p. 9
    assert answer_line("What is TripPy?", [Evidence(future, "2005.02877", 1, 9, TRIPPY)]) is None  # "X, we": no


def test_no_line_for_a_topic_a_person_or_what_the_texts_do_not_hold():
    evidence = [Evidence(TABLE, "2005.02877", 1, 6), Evidence(FED, "2006.12719", 2, 3)]
    assert answer_line("dialog state tracking on MultiWOZ", evidence) is None  # a topic, not a question
    assert answer_line("Who proposed TripPy?", evidence) is None  # a person's question: their profile answers
    assert answer_line("What BLEU score does TripPy reach on WMT14?", evidence) is None
    assert answer_line("What accuracy does ELMo reach on SQuAD?", evidence) is None


def test_the_paper_a_text_is_from_names_what_the_text_does_not():
    """A passage of the SPECTER paper is about SPECTER, whether or not its sentence says so; a version the paper
    names ("MultiWOZ 2.1") is not given so, and a text that names the subject itself still comes first."""
    question = "What happens when author names are added as input to SPECTER?"
    assert answer_line(question, [Evidence(SPECTER_P7, "2004.07180", 3, 7)]) is None  # not named: from any paper
    line = answer_line(question, [Evidence(SPECTER_P7, "2004.07180", 3, 7, about=SPECTER)])
    assert line is not None and "adding authors as an input (along with title and abstract) hurts" in line.quote
    about = f"{TRIPPY} {TRIPPY_ABSTRACT_END}"
    evidence = [Evidence(TABLE, "2005.02877", 1, 6, about), Evidence(TRIPPY_ABSTRACT_END, "2005.02877", 1, None, about)]
    line = answer_line("What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", evidence)
    assert line is not None and "TripPy 55.29±0.28%" in line.quote and line.evidence.page == 6
    only_row = [Evidence("Models MultiWOZ 2.0 TRADE 48.60% TripPy 61.02%", "2005.02877", 1, 6, about)]
    assert answer_line("What joint goal accuracy does TripPy reach on MultiWOZ 2.1?", only_row) is None


def test_a_verbs_endings_and_the_little_words_between_do_not_hide_the_figure():
    """"improve" is "improved"; "rate over the baseline by 46.5%" has the figure two words of substance away."""
    line = answer_line("By how much did SPECTER improve the clickthrough rate in the online A/B test?",
                       [Evidence(SPECTER_P6, "2004.07180", 3, 6, SPECTER)])  # fmt: skip
    assert line is not None and line.quote.startswith("In a dataset of 4,113 clicks") and "46.5%" in line.quote


def test_a_figure_answers_from_its_own_sentence_not_the_one_before_it():
    """The abstract's "eighteen fine-grained dialog qualities" followed by a sentence naming the turn level is not
    the count at the turn level: the figure of a pair must stand in its second sentence."""
    evidence = [Evidence(FED_ABSTRACT_END, "2006.12719", 2, None, "FED"), Evidence(FED, "2006.12719", 2, 3, "FED")]
    line = answer_line("How many dialog qualities does the FED dataset annotate at the turn level?", evidence)
    assert line is not None and line.evidence.page == 3 and "eight at the turn level" in line.quote



# TripPy p. 6: table 2's text as pypdf reads it, the paragraph before it run in ("includ-"); its caption does not name
# the measure.
WOZ = (
    "Span predictors are presented only spans from the user utterances Ui to learn from (includ- Models WOZ 2.0 NBT "
    "84.2% BERT-DST 87.7% GLAD 88.1% GCE 88.5% StateNet 88.9% SUMBT 91.0% TripPy 92.7±0.2% Table 2: DST Results on "
    "WOZ 2.0. Models sim-M sim-R SMD-DST 96.8%∗ 94.4%∗ LU-DST 50.4% 87.1% BERT-DST 80.1% 89.6% TripPy 83.5±1.2% "
    "90.0±0.2% Table 3: DST Results on sim-M and sim-R."
)
# ConvLab-2 (2005.07362), p. 8.
CONVLAB = (
    "Table 5 shows the human evaluation results of 5 dialog systems. Comparing with the simulated evaluation in "
    "Table 1, we can see that Pearson’s correlation coefficient lies around 0.5 to 0.6 for most systems, indicating "
    "that simulated evaluation correlates moderately with human evaluation."
)


def test_what_x_wants_a_figure_of_x_not_a_figure_beside_the_name():
    """"What margin does SPECTER use ...": SPECTER's click-through gain is a figure near the name, but not a margin;
    a line must say what kind of figure it gives (most of the words asked for, their initials, or a table's
    caption: a row's measure stands in its table's header)."""
    p6 = [Evidence(SPECTER_P6, "2004.07180", 3, 6, SPECTER)]
    assert answer_line("What margin does SPECTER use in its triplet loss?", p6) is None
    assert answer_line("What clickthrough rate gain does SPECTER reach?", p6) is not None
    cited = [Evidence("SPECTER's ranker improved clickthrough by 46.5% (Table 4).", "2004.07180", 3, 6, SPECTER)]
    assert answer_line("What margin does SPECTER use in its triplet loss?", cited) is None  # a mention, no caption
    trained = [Evidence("TripPy is trained for 10 epochs on 512 dialogs.", "2005.02877", 1, 6, TRIPPY)]
    assert answer_line("What input size does TripPy use?", trained) is None  # initials "is" are not "input size"
    line = answer_line("What joint goal accuracy does TripPy reach on WOZ 2.0?", [Evidence(WOZ, "2005.02877", 1, 6)])
    assert line is not None and "TripPy 92.7±0.2% Table 2: DST Results on WOZ 2.0." in line.quote
    assert "sim-M" not in line.quote  # the sentence the row stands in, not the next table


def test_how_well_asks_for_a_figure():
    line = answer_line("How well does simulated evaluation of dialog systems correlate with human evaluation?",
                       [Evidence(CONVLAB, "2005.07362", 3, 8)])  # fmt: skip
    assert line is not None and "0.5 to 0.6" in line.quote
    assert answer_line("How well does simulated evaluation of dialog systems correlate with human evaluation?",
                       [Evidence(CONVLAB.split(" Comparing")[0], "2005.07362", 3, 8)]) is None  # no figure: no line


# TripPy p. 6 and p. 8, table 4 (p. 7); FED p. 3: as pypdf reads them.
OPTIMIZER = (
    "For optimization we use Adam optimizer (Kingma and Ba, 2014) and backpropagate through the entire network "
    "including BERT, which constitutes a finetuning of the latter. The initial learning rate is set to 2e−5."
)
GENERALIZES = "Overall, TripPy clearly generalizes better over sample counts."
ABLATION = (
    "Model JGA Span prediction only (entire turn) 42.63% + triple copy mechanism 49.23% + dialog history 52.58% + "
    "auxiliary features 54.08% + masking 54.29% TripPy (full sequence width) 55.29% Table 4: Ablation experiments for "
    "our model."
)
ANNOTATORS = (
    "Given that each of the 4712 data points was labeled by five annotators, post-processing was used to improve the "
    "quality of the data through the removal of outliers."
)


def test_which_x_wants_a_sentence_about_x_not_any_sentence_naming_the_paper():
    """"Which optimizer does TripPy use?" is not answered by a sentence that only names TripPy; "what batch size"
    not by a results table (its caption stands for a measure of results, not a setting); "how many annotators
    labeled ..." wants the annotators counted, with no "does" after them; a learning rate is written "2e−5"."""
    trippy = [Evidence(GENERALIZES, "2005.02877", 1, 8, TRIPPY), Evidence(OPTIMIZER, "2005.02877", 1, 6, TRIPPY)]
    line = answer_line("Which optimizer does TripPy use?", trippy)
    assert line is not None and "Adam optimizer" in line.quote and line.evidence.page == 6
    assert answer_line("Which optimizer does TripPy use?", trippy[:1]) is None
    rate = answer_line("What learning rate does TripPy use?", trippy)
    assert rate is not None and "2e−5" in rate.quote
    assert answer_line("What batch size does TripPy use?", [Evidence(ABLATION, "2005.02877", 1, 7, TRIPPY)]) is None
    fed = [Evidence(FED, "2006.12719", 2, 3, "FED"), Evidence(ANNOTATORS, "2006.12719", 2, 3, "FED")]
    count = answer_line("How many annotators labeled each FED data point?", fed)
    assert count is not None and "labeled by five annotators" in count.quote


def test_a_definition_is_not_a_name_in_brackets_and_a_title_is_quoted_alone():
    """"our embeddings (SPECTER) compared ..." mentions SPECTER, it does not define it; TripPy's first page, as pypdf
    reads it, runs the title into the authors and their addresses: the title alone is quoted."""
    seen = ("Visualization Figure 2 shows t-SNE (van der Maaten, 2014) projections of our embeddings (SPECTER) "
            "compared with the SciBERT baseline")  # SPECTER p. 7  # fmt: skip
    line = answer_line("What is SPECTER?", [Evidence(seen, "2004.07180", 3, 7, SPECTER, SPECTER),
                                            Evidence(SPECTER_ABSTRACT, "2004.07180", 3, None, SPECTER, SPECTER)])
    assert line is not None and line.quote.startswith("We propose SPECTER, a new method")
    first = (f"{TRIPPY} Michael Heck, Carel van Niekerk, Nurul Lubis, Christian Geishauser, Hsien-Chin Lin, Marco "
             "Moresi, Milica Gaˇsi ́c Heinrich Heine University D ̈usseldorf, Germany "
             "{heckmi,niekerk,lubis,geishaus,linh,moresi,gasic}@hhu.de")  # fmt: skip
    line = answer_line("What is TripPy?", [Evidence(first, "2005.02877", 1, 1, TRIPPY, TRIPPY)])
    assert line is not None and line.quote == TRIPPY and line.evidence.page == 1


# ELMo (1802.05365) p. 4 and p. 6, as pypdf reads them: "F1improved" is one word there.
ELMO = "Deep contextualized word representations"
ELMO_TEST = (
    "After adding ELMo to the baseline model, test set F1improved by 4.7% from 81.1% to 85.8%, a 24.9% relative error "
    "reduction over the baseline, and improving the overall single model state-of-the-art by 1.4%."
)
ELMO_DEV = (
    "Task Input Only Input & Output Output Only SQuAD 85.1 85.6 84.8 SNLI 88.9 89.5 88.7 SRL 84.7 84.3 80.9 Table 3: "
    "Development set performance for SQuAD, SNLI and SRL when including ELMo at different lo- cations in the "
    "supervised model."
)


def test_the_measure_asked_for_is_the_one_quoted_and_a_measure_run_into_a_word_is_read():
    """"How much does ELMo improve the test F1 on SQuAD?" asks for the test set's F1: the development set's table
    (which names SQuAD, as the test sentence does not) is no answer, and the test sentence's "F1improved" (pypdf ran
    the words together) holds F1. "What is the perplexity of ..." is not answered by an F1."""
    elmo = [Evidence(ELMO_DEV, "1802.05365", 1, 6, ELMO), Evidence(ELMO_TEST, "1802.05365", 1, 4, ELMO)]
    line = answer_line("How much does ELMo improve the test F1 on SQuAD?", elmo)
    assert line is not None and line.evidence.page == 4 and "test set F1 improved by 4.7%" in line.quote
    assert answer_line("How much does ELMo improve the test F1 on SQuAD?", elmo[:1]) is None
    assert answer_line("What is the perplexity of ELMo on SQuAD?", elmo[1:]) is None  # a figure of an F1
    jga = answer_line("What is the joint goal accuracy of TripPy on WOZ 2.0?", [Evidence(WOZ, "2005.02877", 1, 6)])
    assert jga is not None and "TripPy 92.7±0.2% Table 2: DST Results on WOZ 2.0." in jga.quote  # a caption will do


def test_a_title_or_an_abstract_begins_where_its_text_does():
    """A passage may begin inside a sentence ("… "), an abstract or a title never does, lower case or not."""
    title = "ceLLMate: Sandboxing Browser AI Agents"
    line = answer_line("What is ceLLMate?", [Evidence(title, "2512.12594", 1, None, title, title, whole=True)])
    assert line is not None and line.quote == title
    line = answer_line("What is ceLLMate?", [Evidence(title, "2512.12594", 1, 3, title, title)])
    assert line is not None and line.quote == f"… {title}"  # (a passage's first words)


def test_a_name_spelled_out_is_defined_and_a_lists_last_item_is_not():
    """ELMo p. 4 spells SQuAD out: that defines it. P. 8 ends a list with it ("For coreference and SQuAD, the λ is
    strongly favored", pypdf losing the λ): no apposition, so no definition, though the sentence is shorter."""
    listed = ("For coreference and SQuAD, the this is strongly favored, but the distribution is less peaked for the "
              "other tasks.")  # ELMo p. 8
    spelled = ("Question answeringThe Stanford Question Answering Dataset (SQuAD) (Rajpurkar et al., 2016) contains "
               "100K+ crowd sourced questionanswer pairs where the answer is a span in a given Wikipedia paragraph.")
    assert answer_line("What is SQuAD?", [Evidence(listed, "1802.05365", 1, 8, ELMO)]) is None
    line = answer_line("What is SQuAD?", [Evidence(listed, "1802.05365", 1, 8, ELMO),
                                          Evidence(spelled, "1802.05365", 1, 4, ELMO)])  # fmt: skip
    assert line is not None and line.evidence.page == 4 and line.quote == spelled
    named = "Our baseline model uses SQuAD (Rajpurkar et al., 2016) as its training data."  # brackets, not a spelling
    assert answer_line("What is SQuAD?", [Evidence(named, "1802.05365", 1, 4, ELMO)]) is None


def test_capitals_inside_a_question_name_what_its_paper_is_about_and_names_alone_answer_nothing():
    """"Semantic Scholar" inside a question is a name, as "TripPy" is: the sentence of p. 2 that counts the unique
    paper nodes need not say it when its paper's title does (it did not hold enough of the question when the two
    words weighed as plain ones). A figure counting a list of things ("280M nodes, representing papers, authors,
    entities and ...") does not count one of them ("author nodes"). A line of names alone, an author list, answers
    no question about the person."""
    about = ("Construction of the Literature Graph in Semantic Scholar We describe a deployed scalable system for "
             "organizing published scientific literature into a heterogeneous graph.")
    nodes = ("While some of the paper sources provide these attributes as metadata, it is often necessary to extract "
             "them from the paper PDF (details in §3). We deterministically remove duplicate papers based on string "
             "similarity of their metadata, resulting in 37M unique paper nodes.")  # 1805.02262, p. 2
    question = "How many unique paper nodes does the Semantic Scholar literature graph have?"
    line = answer_line(question, [Evidence(nodes, "1805.02262", 1, 2, about)])
    assert line is not None and line.quote.endswith("resulting in 37M unique paper nodes.")
    assert answer_line(question, [Evidence(nodes, "1805.02262", 1, 2, "A graph of papers")]) is None  # not its paper
    graph = ("The resulting literature graph consists of more than 280M nodes, representing papers, authors, entities "
             "and various interactions between them (e.g., authorships, citations, entity mentions).")  # the abstract
    typed = ("Authors. Each node of this type represents a unique author, with attributes such as ‘first name’ and "
             "‘last name’. The literature graph has 12M nodes of this type.")  # p. 2
    evidence = [Evidence(graph, "1805.02262", 1, None, about, whole=True), Evidence(typed, "1805.02262", 1, 2, about)]
    line = answer_line("How many author nodes are in the Semantic Scholar literature graph?", evidence)
    assert line is not None and line.evidence.page == 2 and line.quote.endswith("has 12M nodes of this type.")
    assert answer_line("How many author nodes are in the Semantic Scholar literature graph?", evidence[:1]) is None
    authors = "Iz Beltagy, Kyle Lo, Arman Cohan."
    about = f"SciBERT: A Pretrained Language Model for Scientific Text {authors}"
    assert answer_line("What has Iz Beltagy written?", [Evidence(authors, "1903.10676", 1, 1, about)]) is None


def test_a_figure_may_be_quoted_with_the_two_sentences_that_name_what_it_is_of():
    """TripPy p. 5 names MultiWOZ 2.1 two sentences before it counts its domain-slot pairs: the three are quoted, as
    a sentence is with the one before it. Without the sentence naming the version there is no line ("MultiWOZ 2.0"
    has other counts)."""
    named = "Among these, MultiWOZ 2.1 is by far the most challenging dataset. "
    counts = ("It is comprised of over 10000 multi-domain dialogs defined over a fairly large ontology. There are 5 "
              "domains (train, restaurant, hotel, taxi, attraction) with 30 domain-slot pairs that appear in all "
              "portions of the data. The other datasets are single-domain and significantly smaller.")
    question = "How many domains and domain-slot pairs does MultiWOZ 2.1 have?"
    line = answer_line(question, [Evidence(named + counts, "2005.02877", 1, 5, TRIPPY)])
    assert line is not None and line.quote.startswith(named) and "with 30 domain-slot pairs" in line.quote
    assert line.quote.endswith("portions of the data.")
    assert answer_line(question, [Evidence(counts, "2005.02877", 1, 5, TRIPPY)]) is None


def test_a_paper_naming_a_name_in_two_of_its_texts_is_about_it():
    """ELMo's title and abstract never say "ELMo"; its full text does, passage after passage. The p. 4 sentence that
    counts its filters (not naming ELMo) answers, from that paper; a paper naming ELMo in one text is not about it."""
    filters = ("The context insensitive type representation uses 2048 character n-gram convolutional filters followed "
               "by two highway layers (Srivastava et al., 2015) and a linear projection down to a 512 representation.")
    named = ["ELMo is a task specific combination of the intermediate layer representations in the biLM.",  # p. 3
             "Additionally, we analyze the sensitivity to where ELMo is included in the task model (Sec.5.2)."]  # p. 6
    question = "How many character n-gram convolutional filters does ELMo use?"
    evidence = [Evidence(filters, "1802.05365", 1, 4, ELMO), Evidence(named[0], "1802.05365", 1, 3, ELMO),
                Evidence(named[1], "1802.05365", 1, 6, ELMO)]  # fmt: skip
    line = answer_line(question, evidence)
    assert line is not None and line.evidence.page == 4 and line.quote == filters
    assert answer_line(question, evidence[:2]) is None  # one text naming it
    assert answer_line(question, [evidence[0], *(replace(e, paper_id="x") for e in evidence[1:])]) is None


def test_the_sentences_quoted_before_the_answer_earn_nothing_for_the_papers_own_name_and_one_is_no_figure():
    """ELMo p. 6: the sentence giving the SNLI accuracy is quoted alone, not with the two before it for their
    "ELMo" (its paper's name, which the sentence need not say). "In one of the papers" counts nothing."""
    about = f"{ELMO} ELMo"
    before = ("A small λ is preferred in most cases with ELMo, although for NER, a task with a smaller training set, "
              "the results are insensitive to λ (not shown). The overall trend is similar with CoVe but with smaller "
              "increases over the baseline. ")
    snli = ("For SNLI, averaging all layers with λ=1 improves development accuracy from 88.2 to 88.7% over using just "
            "the last layer.")
    line = answer_line("What accuracy does ELMo reach on SNLI?", [Evidence(before + snli, "1802.05365", 1, 6, about)])
    assert line is not None and line.quote == snli
    mentions = ("Each node of this type represents a textual reference of an entity in one of the papers, with "
                "attributes such as ‘mention text’, ‘context’, and ‘confidence’.")  # 1805.02262, p. 2
    about = "Construction of the Literature Graph in Semantic Scholar"
    question = "How many entities does the Semantic Scholar literature graph link?"
    assert answer_line(question, [Evidence(mentions, "1805.02262", 1, 2, about)]) is None


def test_a_run_of_three_words_is_too_short_though_marked_cut_at_both_ends():
    """"… paper draft 13 …" (a footnote's number in a long run-on text) says nothing: its "…" are not words."""
    text = ("Footnotes of the system description, as pypdf reads them from the page margin with the running header and "
            "the page numbers in between the words of the text, the paper draft 13 and the code release notes, the "
            "annotation guidelines that were followed by the annotators, the evaluation scripts and the test sets "
            "that are released with it")
    assert answer_line("How many papers are in the draft?", [Evidence(text, "1805.02262", 1, 7)]) is None
