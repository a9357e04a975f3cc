"""The punctuation fastembed's BM25 strips from text, kept in the models directory instead of recomputed.

fastembed's `Bm25.__init__` calls `get_all_punctuation()`, which asks `unicodedata` for the category of each of the
1.1 million code points: about 0.15 s of CPU (a quarter of loading both models) in every process that loads the
sparse model (each server on its first question, each job's encoder process, each command that indexes). The set
depends only on the Unicode tables of this Python, so it is computed once per Unicode version, written beside the
models, and handed to fastembed by `use_kept_punctuation`. That replaces one name,
`fastembed.sparse.bm25.get_all_punctuation`, and is our only change to fastembed's internals:
`tests/retrieval/test_punctuation.py` fails when the lock moves fastembed off `FASTEMBED_VERSION` (read
`Bm25.__init__` again before moving it).
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from pathlib import Path

FASTEMBED_VERSION = "0.9.1"


def all_punctuation() -> frozenset[str]:
    """What fastembed computes: every code point whose Unicode category is punctuation (P*)."""
    return frozenset(chr(i) for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P"))


def kept_punctuation(models_dir: Path) -> frozenset[str]:
    """`all_punctuation()`, read from `models_dir` when this Unicode version's set is there; otherwise computed and
    written there (whole, then renamed: a reader never sees half of it). A file that does not read back as a list
    of code points is computed again; a directory that cannot be written only costs the computation next time too."""
    path = models_dir / f"punctuation-unicode-{unicodedata.unidata_version}.json"
    try:
        points = json.loads(path.read_text(encoding="ascii"))
        if isinstance(points, list) and points and all(isinstance(p, int) and 0 <= p < sys.maxunicode for p in points):
            return frozenset(map(chr, points))
    except (OSError, ValueError):
        pass
    punctuation = all_punctuation()
    partial = path.with_suffix(f".{os.getpid()}.partial")
    try:
        partial.write_text(json.dumps(sorted(map(ord, punctuation))), encoding="ascii")
        partial.replace(path)
    except OSError:
        partial.unlink(missing_ok=True)
    return punctuation


def use_kept_punctuation(models_dir: Path) -> None:
    """Make fastembed's BM25 take its punctuation from `kept_punctuation(models_dir)` (a copy for each model, as
    fastembed's own function gives). Call before building a `SparseTextEmbedding`; the set is the same whichever
    models directory gave it, so calling it again, from any thread, changes nothing."""
    import fastembed.sparse.bm25

    punctuation = kept_punctuation(models_dir)
    fastembed.sparse.bm25.get_all_punctuation = lambda: set(punctuation)
