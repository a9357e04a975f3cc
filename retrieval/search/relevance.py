"""When a hit is worth showing: the relevance floor.

Fused scores say only how a hit ranks against the others (each side's scores are divided by its best), so a list
of unrelated papers looks as confident as a list of right ones. The floor reads the dense side's own cosine
instead. A paper clears it when its best abstract point (abstract or sentence window) scores at least `dense`
and no more than `gap` under the best paper of the list. A full-text passage clears it at `passage`.

The numbers are those of the bundled encoder (all-MiniLM-L6-v2), calibrated on the judged questions
(`tests/fixtures/judged_questions.jsonl`, `python -m bench.precision`; BENCHMARKS.md, "Session 31"). On the
demo, the questions about subjects the archive does not hold had a best abstract cosine of 0.15-0.42 and a best
passage cosine of 0.11-0.32. The answerable ones had 0.64-0.90 on abstracts (topics), or 0.42-0.87 on passages
(facts in the full text).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Floor:
    dense: float = 0.5  # a paper's best abstract or window cosine, at least
    gap: float = 0.25  # and at most this far under the list's best paper
    passage: float = 0.37  # a full-text passage's cosine, at least
    pool: int = 10  # candidates weighed to fill a list, so a clearing paper ranked 6th can take a weak 5th's place

    def papers(self, cosines: list[float | None]) -> list[bool]:
        """Which papers of a list (their best dense cosines; None: the dense side did not score it) clear it."""
        best = max((c for c in cosines if c is not None), default=None)
        if best is None:
            return [False for _ in cosines]
        low = max(self.dense, best - self.gap)
        return [c is not None and c >= low for c in cosines]

    def passages(self, cosines: list[float | None]) -> list[bool]:
        return [c is not None and c >= self.passage for c in cosines]


FLOOR = Floor()
