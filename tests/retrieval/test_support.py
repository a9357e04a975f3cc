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
