"""SciFact (or any BEIR set) through the product's own indexing and search: BM25, dense and hybrid rows.

    .venv/bin/python -m bench.retrieval /path/to/scifact_beir [--split train --split test] [--work-dir DIR]

The same command as `scholarloom bench retrieval` (all its options work); `ingest/beir.py` says
what runs. The data set is read where it lies (SciFact is licensed for non-commercial use and is not part
of this repository).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scholarloom.cli import app  # noqa: E402

if __name__ == "__main__":
    app(["bench", "retrieval", *sys.argv[1:]], prog_name="bench/retrieval.py")
