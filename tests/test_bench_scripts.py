"""Every script in bench/ imports cleanly: no work at import, and the tools only one measurement needs (PyTorch for
`bench.check_embeddings`) are imported when that step runs. A helper renamed in `bench/load.py` or
`bench/precision.py`, which other scripts import, then fails here, not in the middle of a benchmark run that nobody
repeats for weeks. `tests/test_benchmarks_doc.py` checks that each script has its row in BENCHMARKS.md. And
`bench.load`'s realistic stand-in model and its two scenarios (chat sessions, a sign-in storm) run on a tiny scale."""

import re
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


def test_the_realistic_stand_in_calls_tools_then_writes_from_what_they_found():
    """Two or three tool calls a turn, then about 300 words citing only the numbers the tools gave (a quoted "[7]"
    made round), streamed a few words a chunk over most of the latency."""
    from harness.llm_server import _chunks
    from harness.realistic import RealisticResponder

    found = ("Papers matching 'point clouds':\n"
             "[4] Deep Sets (A. Author, 2017); id 1703.06114; page /papers/1703.06114\n"
             "    matching: Sets of points \\(as in [7]\\) are handled.\n"
             "[5] PointNet (B. Author, 2016); id 1612.00593; page /papers/1612.00593\n"
             "[6] Other (C. Author, 2019); id 1901.00001; page /papers/1901.00001")  # fmt: skip
    passage = ("Full-text passages matching 'point clouds':\n[5, p. 3, section 'Method'] PointNet; page /papers/x\n"
               "    We learn a symmetric function over the points.")  # fmt: skip
    model = RealisticResponder(latency=1.0)
    messages = [{"role": "system", "content": "system"}, {"role": "user", "content": "[t0k3n] point clouds (turn 0)"}]
    made, outputs = [], iter((found, passage, passage))
    while "tool_calls" in (reply := model({"messages": messages})) and len(made) < 4:
        output = next(outputs)
        call = reply["tool_calls"][0]
        made.append((call["name"], call["arguments"]))
        messages += [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": call["name"], "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": output}]  # fmt: skip
    assert made[0] == ("search_papers", {"query": "point clouds", "limit": 5}) and 2 <= len(made) <= 3, made
    assert made[-1] == ("search_fulltext", {"query": "point clouds", "limit": 4}), made
    assert len(made) == 2 or made[1] == ("get_paper", {"paper_id": "1703.06114"}), made  # the best paper found
    answer = reply["content"]
    assert answer.startswith("Answer for [t0k3n]: ") and 280 <= len(answer.split()) <= 360, answer
    assert set(re.findall(r"\[(\d+)", answer)) == {"4", "5", "6"} and "[5, p. 3]" in answer, answer
    assert 0.7 <= reply["over"] < 1.0 and 80 <= len(list(_chunks(reply, "m"))) <= 130
    # Sent back the sentences the check did not find (issue 71), it drops them, as a model told to fix or drop does
    # at the least.
    from assistant.claim_check import Mark, mend_request
    from retrieval.search.support import Verdict

    dropped = "Where [4] states a result in general terms, [5] gives the details a reader would need to check it."
    draft = f"PointNet learns a symmetric function [5]. {dropped} Deep Sets handles sets [4]."
    asked = mend_request([Mark(dropped, (4, 5), Verdict(False, "", 0.1))], [])
    sent_back = [*messages, {"role": "assistant", "content": draft}, {"role": "user", "content": asked}]
    mended = model({"messages": sent_back})
    assert mended["content"] == "PointNet learns a symmetric function [5]. Deep Sets handles sets [4]."


def test_the_load_benchmark_runs_realistic_chats_and_a_sign_in_storm(demo):
    """`bench.load` on a tiny scale: two readers arriving over half a second, one realistic turn each, in two client
    processes; then a storm of their two sign-ins. What it reports holds what the realistic benchmark adds."""
    from bench.load import load_server, run_level, run_storm
    from harness.load_clients import Plan
    from harness.serve import free_port

    users = ["load-000", "load-001"]
    with load_server(demo.data_dir, users, llm_latency=0.2, port=free_port()) as (base, server_pid, model_pid):
        plan = Plan(base, users, 0.0, turns=1, ramp=0.5, think=0.0, timeout=60)
        chat = run_level(base, plan, 2, server_pid, model_pid)
        storm = run_storm(base, plan, 1, server_pid, model_pid)
    assert (chat["turns"], chat["errors"], chat["crosstalk"], chat["client_processes"]) == (2, 0, 0, 2), chat
    shown = chat["per_turn"]
    assert shown["tool_steps"] >= 2 and shown["cards"] >= 2 and shown["citations"] >= 2, shown
    assert shown["streamed_chunks"] >= 3, shown  # (the stand-in's ~100 chunks, sent at most every 40 ms)
    assert chat["queued_turns"] == chat["refused_turns"] == chat["refused_sign_ins"] == 0, chat
    assert chat["server_cpu_ms_per_turn"] > 0 and chat["client_cpu_ms_per_turn"] > 0, chat
    assert chat["health_p95_s"] is not None and chat["health_max_s"] >= chat["health_p95_s"], chat
    assert chat["client_lag_max_s"] >= 0 and chat["errors_by_kind"] == {} and chat["peak_connected"] >= 1, chat
    assert chat["sign_in_p95_s"] > 0 and chat["connect_p95_s"] > 0, chat
    assert (storm["signed_in"], storm["errors"], storm["errors_by_kind"]) == (2, 0, {}), storm
    assert 0 < storm["sign_in_p50_s"] <= storm["sign_in_p95_s"] <= storm["sign_in_max_s"], storm
    assert storm["connect_max_s"] > 0 and storm["health_max_s"] is not None, storm
