"""The two shapes of an arXiv id, as parts of larger patterns: a module of plain strings, so the PDF parser's child
process (`ingest.pdf_worker`) reads them without loading the records' pydantic models.

An old id's archive ("hep-th", "cond-mat", "math.AG") is at most 16 letters and starts a run of letters: unbounded,
or free to start inside a run, `[a-z][a-z-]+` is tried again from every letter of a long word, and a scan costs time
quadratic in the text's length."""

NEW_ID = r"\d{4}\.\d{4,5}"
OLD_ID = r"(?<![a-z\-])[a-z][a-z\-]{0,15}(?:\.[A-Z]{2})?/\d{7}"
ARXIV_ID = rf"(?:{NEW_ID}|{OLD_ID})"
