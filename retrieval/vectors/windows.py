"""Cutting text into windows the dense model can read whole (MiniLM reads 256 tokens, then stops)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'\[])")
# A period after these does not end a sentence ("Fig. 2", "et al. (2020)", "e.g. BERT").
_ABBREVIATION = re.compile(
    r"(?:\b(?:fig|figs|eq|eqs|sec|secs|tab|ref|refs|no|vol|pp|cf|vs|al|approx|resp|e\.g|i\.e|ca|dr|prof|st)"
    r"|\b[A-Z])\.$",
    re.IGNORECASE,
)


def split_sentences(text: str, min_chars: int = 1) -> list[str]:
    """Sentences by end punctuation followed by a capital, digit or bracket (good enough for abstracts)."""
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text or ""):
        piece = piece.strip()
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        elif piece:
            sentences.append(piece)
    return [s for s in sentences if len(s) >= min_chars]


def sentence_windows(lengths: Sequence[int], budget: int, overlap: bool = True) -> list[tuple[int, int]]:
    """Runs of whole sentences of at most `budget` tokens, as (start, end) slices, half-overlapping or not.

    Every sentence lands in at least one window; a sentence longer than the budget gets a window of its
    own (the model truncates it). With overlap, each window after the first starts at the middle of the one
    before, so a statement that straddles two windows is still read whole by one of them.
    """
    windows: list[tuple[int, int]] = []
    start, count = 0, len(lengths)
    while start < count:
        end, used = start, 0
        while end < count and (end == start or used + lengths[end] <= budget):
            used += lengths[end]
            end += 1
        windows.append((start, end))
        if end >= count:
            break
        start = max(start + 1, (start + end + 1) // 2) if overlap else end
    return windows


def chunk_spans(
    text: str, count_tokens: Callable[[list[str]], list[int]], budget: int, overlap: bool = True
) -> tuple[list[str], list[tuple[int, int]]]:
    """The text's sentences and the (start, end) sentence slices of its windows of at most `budget` tokens."""
    sentences = split_sentences(text)
    if not sentences:
        return [], []
    lengths = count_tokens(sentences)
    if sum(lengths) <= budget:
        return sentences, [(0, len(sentences))]
    return sentences, sentence_windows(lengths, budget, overlap)
