"""Whether a text supports a sentence (`retrieval.search.support`): figures alike however written, a changed figure
or a name the source does not hold is missing, and on the judged claims' held-out half it keeps its measured
figures."""

from __future__ import annotations

from retrieval.search.support import check_sentence, figures, names
from bench.claim_check import load, summary, verdicts

EVIDENCE = ("During training we use dropout (Srivastava et al., 2014) on the BERT output with a rate of 30%. "
            "The model was trained on 4,096 dialogs for 55.29 hours.")  # fmt: skip


def test_figures_and_names_as_a_reader_writes_them():
    assert figures("4,096 dialogs, 55.3% and 12 layers [2, p. 7]") == ["4096", "55.3", "12"]
    assert names("ELMo-enhanced models beat SciBERT and an L2-normalized BERT, Table 4") == [
        "ELMo", "SciBERT", "L2", "BERT"]  # fmt: skip


def test_a_changed_figure_is_missing_and_a_rounded_one_is_not(embedder):
    said = "BERT's output is regularised with 30% dropout while training, on 4096 dialogs over 55.3 hours."
    same = check_sentence(said, [EVIDENCE], embedder.dense)
    assert same.found and not same.missing, same
    changed = check_sentence("BERT's output is regularised with 20% dropout while training.", [EVIDENCE],
                             embedder.dense)  # fmt: skip
    assert not changed.found and changed.missing == ["20"] and "not in the source: 20" == changed.reason()
    named = check_sentence("RoBERTa's output is regularised with 30% dropout while training.", [EVIDENCE],
                           embedder.dense, about="TripPy: a triple copy strategy")  # fmt: skip
    assert "RoBERTa" in named.missing and "TripPy" not in named.missing


def test_the_held_out_claims_keep_the_measured_figures(embedder):
    claims = load("held_out")
    figures_ = summary(claims, [v.found for v in verdicts(claims, embedder.dense)])
    rates = figures_["not_found_rate"]
    assert figures_["claims"] == 78 and figures_["false_alarms"] <= 0.1, figures_
    assert rates["changed_number"] >= 0.9 and rates["wrong_paper"] >= 0.85, figures_


def test_a_saved_questions_judgement_is_checked_sentence_by_sentence(embedder):
    """The judge's cited sentences, against the quotes it was given for each number (issue 71), and the count shown
    with the judgement, the sentences not found named."""
    from retrieval.library.watches import judgement_parts
    from retrieval.search.support import checked_judgement

    texts = [("Hindsight Logging", ["Flor replays training from checkpoints to add log statements afterwards."]),
             ("DiffusionBrowser", ["The browser decodes a preview of the video at every denoising step."])]
    said = ("Previews are decoded at every denoising step [2]. It also doubles the frame rate to 120 fps [2]. "
            "Nothing here cites.")
    checked = checked_judgement(said, texts, embedder.dense)
    assert checked == {"found": 1, "sentences": 2, "missed": ["It also doubles the frame rate to 120 fps [2]."]}
    relation, parts = judgement_parts({"relation": "extends", "text": said, "sources": {"2": "b"}, "checked": checked})
    assert parts[-1] == (" (1 of 2 cited sentences found in the texts they cite; not found: “It also doubles the "
                         "frame rate to 120 fps [2].”)", None)  # fmt: skip
