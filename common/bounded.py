"""A function of ours run on untrusted input in a child process, with a time and a memory limit.

Parsers of other people's formats (BibTeX, RIS, JSON) may hide costs no test found: a server that parses an upload
in its own process, or in one of its threads, can be stalled or exhausted by one request. In a child process the
cost has a ceiling: it is killed when it overruns, and the parent's event loop and threads never wait on it.

The child is `python -m common.bounded MODULE:FUNCTION MEMORY_MB`; it reads the input (UTF-8 text) on stdin and
writes one JSON answer on stdout: `{"ok": <the function's result>}` or `{"error": <the ValueError's message>}`.
The function takes a string and returns what JSON can carry. Nothing of the parent's environment is passed on.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Children at once in one process: more requests wait for a place (up to their own time limit) instead of forking.
_PLACES = threading.BoundedSemaphore(2)


_OUT_OF_MEMORY = 3  # the child's exit status when its memory limit stopped it


class Overrun(RuntimeError):
    """The work took longer or needed more memory than it may, or the child died; the message says which. `busy`:
    it never started, for want of a place."""

    def __init__(self, message: str, busy: bool = False) -> None:
        super().__init__(message)
        self.busy = busy


def run_bounded(target: str, text: str, *, seconds: float = 15.0, memory_mb: int = 512, max_answer: int = 8 << 20):
    """`target` ("module:function") applied to `text` in a child process. Raises ValueError with the function's
    own message, Overrun when the child runs out of time or memory (or there was no place for it in time)."""
    if not _PLACES.acquire(timeout=seconds):
        raise Overrun("the server is busy reading other files; try again in a minute", busy=True)
    try:
        env = {"PYTHONPATH": str(ROOT), "PATH": os.defpath, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        command = [sys.executable, "-m", "common.bounded", target, str(int(memory_mb))]
        try:
            done = subprocess.run(command, input=text.encode("utf-8", "replace"), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, timeout=seconds, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:  # `run` has killed the child
            raise Overrun(f"reading it took longer than {seconds:g} s") from None
    finally:
        _PLACES.release()
    if done.returncode == _OUT_OF_MEMORY:
        raise Overrun(f"reading it needed more than {memory_mb} MB")
    if done.returncode != 0 or not done.stdout or len(done.stdout) > max_answer:
        raise Overrun(f"the reader stopped unexpectedly (exit status {done.returncode})")
    answer = json.loads(done.stdout)
    if "error" in answer:
        raise ValueError(answer["error"])
    return answer["ok"]


def _serve(target: str, memory_mb: int) -> None:  # the child
    import logging
    import resource

    logging.disable(logging.WARNING)  # a parser's warning per broken entry is no one's to read

    cap = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    module, _, name = target.partition(":")
    function = getattr(importlib.import_module(module), name)
    text = sys.stdin.buffer.read().decode("utf-8", "replace")
    sink = sys.stdout
    sys.stdout = sys.stderr  # nothing but the answer on the real stdout (libraries print warnings)
    try:
        answer = json.dumps({"ok": function(text)})
    except ValueError as exc:
        answer = json.dumps({"error": str(exc)[:2000]})
    except MemoryError:
        sys.exit(_OUT_OF_MEMORY)
    sink.write(answer)
    sink.flush()


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))
