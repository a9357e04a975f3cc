"""Where a test run spends its time in the encoder: a pytest plugin that times onnxruntime's `InferenceSession.run`
in each pytest process (the workers; not the servers, CLI runs and job encoders that tests start) and adds it up by
test file.

    .venv/bin/python -m pytest -q -n 2 --dist loadgroup --no-loadscope-reorder -p bench.encoder_time

At the end each process writes `test-artifacts/encoder-time-<worker>.json` (file: [seconds, calls]); the main
process prints the files that took longest, summed over the workers.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "test-artifacts"
_spent: dict[str, list] = defaultdict(lambda: [0.0, 0])


def pytest_configure(config) -> None:
    import onnxruntime

    run = onnxruntime.InferenceSession.run

    def timed(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return run(self, *args, **kwargs)
        finally:
            entry = _spent[os.environ.get("PYTEST_CURRENT_TEST", "(outside a test)").split("::")[0]]
            entry[0] += time.perf_counter() - started
            entry[1] += 1

    onnxruntime.InferenceSession.run = timed
    if not hasattr(config, "workerinput"):  # the main process, before the workers start
        for stale in OUT.glob("encoder-time-*.json"):
            stale.unlink()


def pytest_sessionfinish(session) -> None:
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    OUT.mkdir(exist_ok=True)
    (OUT / f"encoder-time-{worker}.json").write_text(json.dumps(_spent, indent=1, sort_keys=True))


def pytest_terminal_summary(terminalreporter) -> None:
    total: dict[str, float] = defaultdict(float)
    for path in OUT.glob("encoder-time-*.json"):
        for name, (seconds, _calls) in json.loads(path.read_text()).items():
            total[name] += seconds
    terminalreporter.write_line(f"encoder time: {sum(total.values()):.1f} s in the pytest processes")
    for name, seconds in sorted(total.items(), key=lambda item: -item[1])[:15]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {name}")
