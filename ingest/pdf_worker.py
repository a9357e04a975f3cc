"""PDF text extraction in a separate process with a memory limit and a timeout.

pypdf caps single filters but has no budget for a whole document: a decompression bomb, a reference loop
or a pathological content stream can take gigabytes or minutes. So one long-lived child process does the
parsing under `RLIMIT_AS`; the parent waits at most `seconds` for each PDF, and kills and restarts the
child when it overruns or dies. A failure is reported for that PDF and the run goes on.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ingest.pdf_meta import FileMetadata
from ingest.references import Reference


BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


class PdfError(RuntimeError):
    """This PDF could not be read; the message says why."""


@dataclass(frozen=True)
class PdfLimits:
    memory_mb: int = 1024
    seconds: float = 60.0
    max_pages: int = 400
    max_bytes: int = 50 * 1024 * 1024
    max_text_chars: int = 4_000_000  # about 2,000 dense pages; more is not a paper


@dataclass(frozen=True)
class ParsedPdf:
    pages: list[str]
    info: dict[str, str]  # title, author, subject, keywords of the document info, when present
    lines: list[tuple[str, float, float]]  # the first page: text, type size, height (`ingest.pdf_meta`)
    # Read from the text in the child too, under the same time limit (a reference list of 10,000 commas once held
    # the job worker for hours): what the file says it is, the arXiv ids and DOIs its reference list cites, and
    # that list's entries parsed (`ingest.references`).
    meta: FileMetadata = FileMetadata()
    cited: list[tuple[str, str]] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)


def read_frame_within(stream, seconds: float, max_size: int) -> bytes:
    """One frame from the child, refusing a declared size above `max_size` before reading it and giving up when
    the whole frame has not arrived within `seconds` (a child that stalls mid-frame cannot hold the parent)."""
    deadline = time.monotonic() + seconds
    descriptor = stream.fileno()

    def take(count: int) -> bytes:
        chunks, left = [], count
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([descriptor], [], [], wait)[0]:
                raise PdfError(f"the PDF worker did not answer within {seconds:g} s; it was stopped")
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                raise PdfError("the PDF worker died while answering; it was restarted")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    size = int.from_bytes(take(8), "big")
    if size > max_size:
        raise PdfError(f"the PDF worker announced {size} bytes of text, more than the limit of {max_size}")
    return take(size)


def _read_frame(stream) -> bytes | None:
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "big")
    body = stream.read(size)
    return body if len(body) == size else None


def _write_frame(stream, body: bytes) -> None:
    stream.write(len(body).to_bytes(8, "big") + body)
    stream.flush()


def _texts(reader, max_chars: int) -> list[str]:
    texts, total = [], 0
    for page in reader.pages:
        text = page.extract_text() or ""
        total += len(text)
        if total > max_chars:
            raise PdfError(f"the PDF's text is longer than the limit of {max_chars} characters")
        texts.append(text)
    return texts


def _about(reader, pages: list[str]) -> dict:
    """The document info's text fields and the first page's lines with their type sizes (`ingest.pdf_meta`), empty
    when the file's info or layout cannot be read (the text alone still makes passages); what the file says it is
    (`guess_metadata`) and what its reference list cites."""
    from ingest.pdf_meta import first_page_lines, guess_metadata
    from ingest.pdf_text import cited_identifiers, reference_text
    from ingest.references import references

    try:
        info = {str(k).lstrip("/").lower(): str(v)[:2000] for k, v in (reader.metadata or {}).items()}
        info = {k: v for k, v in info.items() if k in ("title", "author", "subject", "keywords")}
    except Exception:  # a broken info dictionary
        info = {}
    try:
        lines = first_page_lines(reader)
    except Exception:  # a first page pypdf can read as text but not lay out
        lines = []
    meta = guess_metadata(info, lines, pages[0] if pages else "")
    return {"info": info, "lines": lines, "meta": asdict(meta), "cited": cited_identifiers(reference_text(pages)),
            "references": [asdict(r) for r in references(reference_text(pages, soft=True))]}  # fmt: skip


def serve(memory_mb: int, max_pages: int, max_chars: int) -> None:  # the child: `python -m ingest.pdf_worker`
    import io
    import resource

    cap = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from pypdf import PdfReader

    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames on the real stdout
    while (data := _read_frame(source)) is not None:
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                raise PdfError("the PDF is encrypted")
            count = len(reader.pages)
            if count > max_pages:
                raise PdfError(f"the PDF has {count} pages, more than the limit of {max_pages}")
            pages = _texts(reader, max_chars)
            answer = {"ok": pages, **_about(reader, pages)}
        except MemoryError:
            answer = {"error": f"the PDF needed more than {memory_mb} MB to parse"}
        except Exception as exc:  # pypdf raises many types on broken files; all of them mean "unreadable"
            answer = {"error": f"unreadable PDF: {type(exc).__name__}: {str(exc)[:200]}"}
        try:
            _write_frame(sink, json.dumps(answer).encode())
        except MemoryError:
            _write_frame(sink, json.dumps({"error": f"the PDF's text needed more than {memory_mb} MB"}).encode())


class PdfWorker:
    """One child process that turns PDF bytes into a list of page texts; restarted after a failure.

    The child is a plain `python -m ingest.pdf_worker` subprocess (not multiprocessing), so it works the
    same under the CLI, the web server or a test runner, whatever `__main__` is.
    """

    def __init__(self, limits: PdfLimits = PdfLimits()) -> None:
        self.limits = limits
        self._process: subprocess.Popen | None = None

    def _start(self) -> None:
        root = str(Path(__file__).resolve().parent.parent)
        # Nothing of the parent's environment (API keys, database URLs): the child parses untrusted files. Where
        # the parent's bytecode goes (or that none is written) holds for the child too.
        env = {"PYTHONPATH": root, "PATH": os.defpath, "LANG": "C.UTF-8",
               **{name: os.environ[name] for name in BYTECODE if name in os.environ}}  # fmt: skip
        limits = self.limits
        command = [sys.executable, "-m", "ingest.pdf_worker", str(limits.memory_mb), str(limits.max_pages),
                   str(limits.max_text_chars)]  # fmt: skip
        self._process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(5)
            for stream in (self._process.stdin, self._process.stdout):
                stream.close()
        self._process = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def extract(self, data: bytes) -> list[str]:
        """The text of each page, in order; raises PdfError when the PDF is too big, broken or too costly."""
        return self.read(data).pages

    def read(self, data: bytes) -> ParsedPdf:
        """The page texts, the document info and the first page's lines (see `extract`)."""
        if len(data) > self.limits.max_bytes:
            raise PdfError(f"the PDF is {len(data)} bytes, more than the limit of {self.limits.max_bytes}")
        if not data.lstrip()[:5].startswith(b"%PDF"):
            raise PdfError("not a PDF (no %PDF header)")
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._start()
        process = self._process
        try:
            _write_frame(process.stdin, data)
            ready, _, _ = select.select([process.stdout], [], [], self.limits.seconds)
            if not ready:
                self._stop()
                raise PdfError(f"parsing took longer than {self.limits.seconds:g} s; the worker was stopped")
            # JSON of the page texts, the first page's lines and the reference list's entries (raw and parsed: the
            # list's text twice) again: at most 6 bytes a character (\\uXXXX) each, plus the frame's own
            # punctuation and the document info.
            body = read_frame_within(process.stdout, self.limits.seconds, 24 * self.limits.max_text_chars + 65_536)
        except PdfError:
            self._stop()
            raise
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            self._stop()
            raise PdfError(f"the PDF worker died while parsing ({type(exc).__name__}); it was restarted") from exc
        answer = json.loads(body)
        if "error" in answer:
            raise PdfError(answer["error"])
        lines = [(str(t), float(size), float(y)) for t, size, y in answer.get("lines", [])]
        cited = [(str(kind), str(value)) for kind, value in answer.get("cited", [])]
        references = [Reference(**entry) for entry in answer.get("references", [])]
        return ParsedPdf(answer["ok"], answer.get("info", {}), lines, FileMetadata(**answer["meta"]), cited,
                         references)  # fmt: skip

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> "PdfWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
