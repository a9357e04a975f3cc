"""Title, authors and abstract read from a PDF itself: the eight shipped PDFs through the real worker, and the
rules one by one."""

from bench.pdf_metadata import measure
from ingest.pdf_meta import MARK, _lines, guess_metadata


def test_the_eight_pdfs_title_and_authors():
    for scored in measure().values():  # the first page's layout alone does as well as with the document info
        assert len(scored) == 8
        assert [s.file for s in scored if not s.title_ok] == []
        assert sum(s.f1 for s in scored) / len(scored) >= 0.9 and min(s.f1 for s in scored) >= 0.8


RUNS = [  # (text, type size, height) as the PDF worker's visitor sees them
    ("Proceedings of a Workshop, pages 1-9", 9.0, 40.0),  # low on the page: never the title
    ("L", 14.3, 760.0), ("ONG", 11.5, 760.0), ("E", 14.3, 760.0), ("VAL", 11.5, 760.0),  # small capitals
    (": Guidelines for Human\n", 14.3, 760.0),
    ("Evaluation of Faithfulness\n", 14.3, 744.0),
    ("Ana María Gaˇsi´c", 12.0, 715.0), ("1", 8.0, 719.0), (" Bo Li", 12.0, 715.0), ("2", 8.0, 719.0),
    (" Chen Wei\n", 12.0, 715.0),  # names apart only by raised affiliation numbers
    ("Heinrich Heine University, Germany\n", 12.0, 700.0),
    ("{ana,bo}@example.org\n", 12.0, 690.0),
    ("Abstract\n", 12.0, 650.0),
]  # fmt: skip
LINES = _lines(RUNS)
PAGE = ("Abstract\nWe measure faith-\nfulness of long summaries.\n1 Introduction\n"
        "Text. arXiv:2301.13298v2 doi 10.18653/v1/2023.eacl-main.121.")


def test_layout_rules():
    meta = guess_metadata({}, LINES, PAGE)
    assert meta.title == "LongEval: Guidelines for Human Evaluation of Faithfulness"  # small caps joined back
    assert meta.authors == ["Ana María Gašić", "Bo Li", "Chen Wei"]  # accents put on their letters, no affiliation
    assert meta.abstract == "We measure faithfulness of long summaries."
    assert (meta.arxiv_id, meta.doi) == ("2301.13298", "10.18653/v1/2023.eacl-main.121")


def test_the_document_info_title_unless_it_is_a_file_name():
    assert guess_metadata({"title": "A Real Title Here"}, LINES, "").title == "A Real Title Here"
    for junk in ("SysEval.pdf", "Microsoft Word - draft7.docx", "untitled", "x"):
        assert guess_metadata({"title": junk}, LINES, "").title.startswith("LongEval")


def test_info_authors_only_when_the_page_names_none():
    no_byline = [line for line in LINES if MARK not in line[0]]
    meta = guess_metadata({"author": "Waleed Ammar ; oren etzioni ; yi__c"}, no_byline, "")
    assert meta.authors == ["Waleed Ammar", "Oren Etzioni"]  # a user name is not an author
    assert guess_metadata({"author": "Somebody Else"}, LINES, "").authors[0] == "Ana María Gašić"


def test_nothing_readable_gives_empty_fields():
    meta = guess_metadata({}, [], "")
    assert (meta.title, meta.authors, meta.abstract, meta.arxiv_id, meta.doi) == ("", [], "", None, None)
