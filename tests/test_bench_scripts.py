"""Every script in bench/ imports cleanly: no work at import, and the tools only one measurement needs (PyTorch for
`bench.check_embeddings`) are imported when that step runs. A helper renamed in `bench/load.py` or
`bench/precision.py`, which other scripts import, then fails here, not in the middle of a benchmark run that nobody
repeats for weeks. `tests/test_benchmarks_doc.py` checks that each script has its row in BENCHMARKS.md."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPORT_EACH = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(f'bench.{name}')\n"


def test_every_benchmark_script_imports():
    scripts = sorted(path.stem for path in (ROOT / "bench").glob("*.py"))
    assert {"retrieval", "precision", "load", "load_compare", "search_latency", "check_embeddings"} <= set(scripts)
    # A fresh interpreter: some scripts put bench/ first on sys.path, where bench/retrieval.py would shadow the
    # retrieval package for the rest of the suite.
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH, *scripts], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
