"""Hostile PDFs built byte by byte (nothing downloaded): a decompression bomb, a reference loop, a truncated file."""

from __future__ import annotations

import zlib
from pathlib import Path

PDFS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pdfs"


def assemble(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF from numbered objects (1..n in order) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)


def _stream(data: bytes) -> bytes:
    packed = zlib.compress(data, 9)
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream"


def decompression_bomb(pages: int = 40, megabytes: int = 60) -> bytes:
    """Every page draws the same 60 MB line of text, stored once and compressed about 1,000 to 1: the file is
    ~100 KB, its text gigabytes."""
    content = b"BT /F1 12 Tf 72 712 Td (" + b"A" * (megabytes * 1024 * 1024) + b") Tj ET"
    first_page = 4
    kids = b" ".join(b"%d 0 R" % (first_page + n) for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        _stream(content),
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources << /Font << /F1 %d 0 R >> >> >>"
    objects += [page % (first_page + pages)] * pages
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return assemble(objects)


def reference_loop() -> bytes:
    """A page tree whose two inner nodes are each other's child (and a content stream whose length is itself)."""
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 4 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] /Contents 5 0 R >>",
            b"<< /Length 5 0 R >>\nstream\nBT (loop) Tj ET\nendstream",
        ]
    )


def truncated() -> bytes:
    """A real paper cut off after its first third: no cross-reference table, no trailer."""
    real = (PDFS / "2023.eacl-main.121.pdf").read_bytes()
    return real[: len(real) // 3]


def text_pdf(lines: list[str]) -> bytes:
    """One page that shows these lines of text, top to bottom (Helvetica, ASCII)."""
    shown = b"".join(b"0 -14 Td (" + line.encode("ascii").replace(b"\\", b"\\\\").replace(b"(", b"\\(")
                     .replace(b")", b"\\)") + b") Tj " for line in lines)  # fmt: skip
    content = b"BT /F1 12 Tf 72 760 Td " + shown + b"ET"
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            _stream(content),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def backtracking_references(commas: int = 20_000) -> bytes:
    """A reference list made to make a careless pattern backtrack: "arXiv" and a run of commas (three unbounded
    `[\\s,:]*` in a row cost cubic time: 1,500 commas held the job worker for 51 s), then one real reference."""
    return text_pdf(["A paper", "References", "[1] arXiv" + "," * commas, "[2] A. Author. A title. arXiv:2004.07180"])
