"""Every regular expression of the product runs in time linear in its text, on adversarial text too.

Python's `re` backtracks: a pattern such as `[a-z][a-z-]+/\\d{7}` scanned over 5,000 letters is tried again from
every letter, so it costs time quadratic in the text (0.6 s for 5,000 letters, minutes at 2 MB: a reading-list
import froze the server), and three `[\\s,:]*` in a row cost cubic time. User text (questions, reading lists,
forms) and paper text (abstracts, PDFs) reach most of them, so all are held to the same rule.

The patterns are found, not listed by hand: every `re.<function>("literal", ...)` call in the source, every
compiled pattern a module holds, and the patterns built at run time (named in `BUILT`, each with how the test
builds one). A pattern written any other way fails `test_every_pattern_is_seen`.

Each pattern is scanned (`finditer`, the costliest use: a search from every position) over texts made to make it
backtrack: runs of one character or of a short shape, after a word of the pattern's own (so its literal prefix
matches), with and without a character that no pattern ends on. A screen at 512 bytes and 4 KB finds each pattern's
costliest texts; those are then timed at 10 KB and 100 KB, and the larger may cost at most 30 times the smaller (a
linear scan: about 10; quadratic: 100). A pattern still running after a second is a failure at once (an alarm
interrupts `re`, which checks for signals while it matches).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PACKAGES = ("assistant", "auth", "chatui", "common", "ingest", "jobs", "pages", "retrieval", "scholarloom", "web")
FUNCTIONS = {"compile", "sub", "subn", "search", "match", "fullmatch", "findall", "finditer", "split"}
FLAGS = {"I": re.I, "IGNORECASE": re.I, "S": re.S, "DOTALL": re.S, "M": re.M, "MULTILINE": re.M, "X": re.X}
# Patterns made from what a caller passes, each with a builder the test calls on adversarial input.
BUILT = {
    "retrieval/search/compare.py": lambda: __import__("retrieval.search.compare", fromlist=["aspect_cues"]).aspect_cues(
        " ".join(["methods", "dataset", "results"] * 20)
    ),
}
ALPHABET = list("aA1 \n\t-.,:;()[]{}/'\"$`*&_\\=@#|?!<>%+~^") + ["\u2019", "\u00e9", "\u2014", "\u2022", "\u00a0"]
SHAPES = ["Aa-", "A. ", "A.", "a-", "a ", "A ", "Aa ", "1.", "a,", ", ", "aA", "a1", "{a}", "a/", "A-", ". A", "v1",
          "A\u2019", "a.", "1 ", "a\n", "Aa", "Aa,", "A, ", "10.1234/", "1234.5678", "<think>", "```", "http://",
          "a=", "key="]  # fmt: skip
TAILS = ("", "\x00")  # "\x00" ends no pattern: a text that almost matches must be given up


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__main__" or "migrations" in parts:
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _flags(node) -> int:
    if isinstance(node, ast.Attribute) and node.attr in FLAGS:
        return FLAGS[node.attr]
    if isinstance(node, ast.BinOp):
        return _flags(node.left) | _flags(node.right)
    return 0


def _calls(tree: ast.Module):
    """(call, held by the module): every `re.<function>(...)` call, and whether its value is a module constant."""
    held = {id(node.value) for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FUNCTIONS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):  # fmt: skip
            yield node, id(node) in held


def _literal(call: ast.Call) -> re.Pattern | None:
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    flags = next((k.value for k in call.keywords if k.arg == "flags"), None)
    position = 1 if call.func.attr == "compile" else 3 if call.func.attr in ("sub", "subn") else 2
    if flags is None and len(call.args) > position:
        flags = call.args[position]
    return re.compile(first.value, _flags(flags))


def _held(module) -> dict[str, re.Pattern]:
    found = {}
    for name, value in vars(module).items():
        values = value if isinstance(value, list | tuple) else [value]
        for i, item in enumerate(values):
            item = item[0] if isinstance(item, tuple) and item else item
            if isinstance(item, re.Pattern):
                found[f"{module.__name__}.{name}" + (f"[{i}]" if values is not value else "")] = item
    return found


@functools.cache
def patterns() -> tuple[dict[str, re.Pattern], list[str]]:
    """Every pattern by where it is written, and the calls whose pattern this test cannot see. Found in a process of
    its own: importing every module here would load Chainlit before the chat's tests prepare its root."""
    found = subprocess.run([sys.executable, "-m", "tests.test_patterns"], cwd=REPO, capture_output=True, text=True,
                           timeout=120, check=True)  # fmt: skip
    written = json.loads(found.stdout.splitlines()[-1])
    return {where: re.compile(p, flags) for where, (p, flags) in written["found"].items()}, written["unseen"]


def _collect() -> tuple[dict[str, re.Pattern], list[str]]:
    found: dict[str, re.Pattern] = {}
    unseen: list[str] = []
    for name in _modules():
        module = importlib.import_module(name)
        path = REPO / (name.replace(".", "/") + ".py")
        path = path if path.exists() else REPO / name.replace(".", "/") / "__init__.py"
        where = str(path.relative_to(REPO))
        for call, held in _calls(ast.parse(path.read_text())):
            pattern = _literal(call)
            if pattern is not None:
                found[f"{where}:{call.lineno}"] = pattern
            elif not held and not isinstance(call.args[0], ast.Name) and where not in BUILT:
                unseen.append(f"{where}:{call.lineno}")
        found.update(_held(module))
    for where, build in BUILT.items():
        found[f"{where} (built)"] = build()
    unique: dict[tuple, str] = {}
    for where, pattern in found.items():
        unique.setdefault((pattern.pattern, pattern.flags), where)
    return {where: found[where] for where in unique.values()}, unseen


class _Overrun(Exception):
    pass


def _alarm(*_):
    raise _Overrun


def scan_seconds(pattern: re.Pattern, text: str, limit: float = 1.0) -> float:
    """This thread's CPU seconds to find every match in `text` (not the wall clock: on a busy machine a long scan is
    preempted more often than a short one, which read as growth); inf when it runs past `limit` seconds."""
    previous = signal.getsignal(signal.SIGALRM)
    if previous is not _alarm:  # not already armed by `_alarmed` (the screen's tens of thousands of short scans)
        signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.thread_time()
    try:
        for _ in pattern.finditer(text):
            pass
        return time.thread_time() - start
    except _Overrun:
        return float("inf")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if previous is not _alarm:
            signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _alarmed():
    """`_alarm` handles SIGALRM throughout: each `scan_seconds` inside only sets and clears its timer."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        yield
    finally:
        signal.signal(signal.SIGALRM, previous)


def _words(pattern: re.Pattern) -> list[str]:
    """The pattern's three longest words: a text that starts with one gets past its literal prefix."""
    return sorted({w.lower() for w in re.findall(r"[A-Za-z]{2,}", pattern.pattern)}, key=len)[-3:]


def texts(pattern: re.Pattern, size: int) -> list[tuple[tuple, str]]:
    """Runs of each character and shape (and of the pattern's own other characters), alone and after its words."""
    own = sorted({c for c in pattern.pattern if not (c.isascii() and c.isalnum()) and c not in ALPHABET})
    made = []
    for word in ["", *_words(pattern)]:
        for shape in [*ALPHABET, *own, *SHAPES]:
            for tail in TAILS:
                made.append(((word, shape, tail), word + shape * (size // len(shape)) + tail))
    return made


def _costliest(pattern: re.Pattern, keep: int = 2) -> tuple[list[tuple], list[str]]:
    """The shapes that cost the most at 4 KB, and those already superlinear from 512 bytes to 4 KB (or stuck)."""
    timed, warnings = [], []
    small = dict(texts(pattern, 512))
    for key, text in texts(pattern, 4096):
        b = scan_seconds(pattern, text, 0.5)
        timed.append((b, key))
        if b <= 1e-4:  # too quick to warn whatever 512 bytes cost (most texts): that scan is not needed
            continue
        a = scan_seconds(pattern, small[key], 0.5)
        if b == float("inf") or b > 24 * max(a, 3e-6):
            warnings.append(key)
            if len(warnings) == keep:  # enough to show it: a broken pattern would take minutes more
                break
    timed.sort(reverse=True)
    return [key for _, key in timed[:keep]], warnings


def _build(key: tuple, size: int) -> str:
    word, shape, tail = key
    return word + shape * (size // len(shape)) + tail


def test_every_pattern_is_seen():
    found, unseen = patterns()
    assert len(found) > 80  # the collection works: about a hundred distinct patterns
    assert not unseen, f"a pattern this test cannot see (write it as a literal or a module constant): {unseen}"


def test_every_pattern_scans_in_linear_time():
    found, _ = patterns()
    slow = []
    for where, pattern in found.items():
        with _alarmed():
            costliest, warned = _costliest(pattern)
        for key in dict.fromkeys([*warned, *costliest]):
            small = min(scan_seconds(pattern, _build(key, 10_000)) for _ in range(2))
            if small == float("inf"):
                slow.append(f"{where} {pattern.pattern[:60]!r} on {key}: 10 KB took over a second")
                break
            allowed = 30 * max(small, 2e-5)
            large = scan_seconds(pattern, _build(key, 100_000), max(0.5, 1.1 * allowed))
            for _ in range(3):  # measured again, both sizes in turn (a busy moment slows one, not the pattern)
                if large <= allowed:
                    break
                small = min(small, scan_seconds(pattern, _build(key, 10_000)))
                allowed = 30 * max(small, 2e-5)
                large = min(large, scan_seconds(pattern, _build(key, 100_000), max(0.5, 1.1 * allowed)))
            if large > allowed:
                slow.append(f"{where} {pattern.pattern[:60]!r} on {key}: 10 KB {small:.4f} s, 100 KB {large:.4f} s")
    assert not slow, "\n".join(slow)


def test_the_measure_sees_a_quadratic_pattern():
    """The measure itself: the unbounded shape the reading-list import had is caught; its bounded form is not."""
    unbounded = re.compile(r"(\d{4}\.\d{4,5}|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})", re.I)
    small = scan_seconds(unbounded, "a" * 1000)
    assert scan_seconds(unbounded, "a" * 8000, 0.5) > 24 * small
    from retrieval.scholarly.records import _MENTION

    small = scan_seconds(_MENTION, "a" * 1000)
    assert scan_seconds(_MENTION, "a" * 8000, 0.5) < 24 * max(small, 5e-6)


if __name__ == "__main__":  # the collection, in its own process (`patterns`)
    _found, _unseen = _collect()
    print(json.dumps({"found": {w: [p.pattern, p.flags] for w, p in _found.items()}, "unseen": _unseen}))
