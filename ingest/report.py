"""What an ingest run did: counts, and failures the user can read."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Failure:
    """A record that could not be used, and why."""

    source: str
    key: str
    reason: str


@dataclass
class Summary:
    counts: Counter = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)

    def add(self, outcome: str, n: int = 1) -> None:
        self.counts[outcome] += n

    def fail(self, failure: Failure) -> None:
        self.failures.append(failure)
        self.counts["failed"] += 1

    def write_failures(self, path: Path) -> Path:
        """One JSON object a line; the file is rewritten each run."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as out:
            for failure in self.failures:
                out.write(json.dumps(failure.__dict__, ensure_ascii=False) + "\n")
        return path

    def line(self) -> str:
        order = ("added", "updated", "unchanged", "skipped", "failed", "indexed")
        extra = sorted(name for name in self.counts if name not in order)
        return ", ".join(f"{name} {self.counts.get(name, 0)}" for name in (*order, *extra))
