"""How the stand-in model answers a load test's questions (`bench.load`): briefly, or as a real model does.

A question reads "[token] topic (turn n)". The short answer (`--answers short`, the benchmark before issue 69) is
one `search_papers` call, then "Answer for [token]: see the first result [1]." The realistic answer
(`--answers realistic`) is what a capable model writes: two or three tool calls a turn (`search_papers` on the
topic, then `get_paper` on the best paper found in one turn of two, then `search_fulltext` on the topic), then
about 300 words streamed a few words a chunk at a steady rate, written from what those tools returned (the papers'
titles, bylines, matching sentences, abstract and passages, each cited with the [n] the tool gave it), so the chat
links several citations and shows several cards. Nothing in it is fixed to one question: the tools' results
decide its numbers and words. In pipeline mode (`--tools off`) the app's own searches are read from the
`<results>` the writing request carries.
"""

from __future__ import annotations

import re
import zlib

from harness.llm_server import _probe_reply, text, tool_call

WORDS = 300  # about what a real answer streams
WORDS_PER_CHUNK = 3  # a few tokens a chunk, as providers stream
FIRST_TOKEN = 0.2  # the share of the latency spent before the first chunk; the rest paces the stream
PAPER = re.compile(r"^\[(\d+)\] (.+?) \((.*?)\); id (\S+); page \S+", re.M)
MATCHING = re.compile(r"^\s+matching: (.+)$", re.M)
PASSAGE = re.compile(r"^\[(\d+), p\. (\d+)[^\]]*\] (.+?); page \S+\n\s+(.+)$", re.M)
ABSTRACT = re.compile(r"^Paper \[(\d+)\]:\n\n# (.+?)\n.*?## Abstract\n\n(.+?)(?:\n\n|\Z)", re.S | re.M)


def asked(messages: list[dict]) -> tuple[int, str, str]:
    """The index of the turn's question among `messages`, its token and its topic."""
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    question = str(messages[last]["content"]).split("\n\n<results>", 1)[0]
    token, _, rest = question.partition("]")
    topic = re.sub(r"\s*\(turn \d+\)\s*$", "", rest).strip()
    return last, token.lstrip("[").strip(), topic or question


def short_responder(body: dict) -> dict:
    """Search first; once the search result is in, answer with the token of the question asked. In pipeline mode
    the same model is asked to rewrite the question, then to write from the results."""
    from assistant.pipeline import REWRITE

    if (probed := _probe_reply(body)) is not None:  # the server asks its model what it can do when it starts
        return probed
    messages = body["messages"]
    question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    token = question.split("[", 1)[1].split("]", 1)[0]
    if messages[-1]["role"] == "tool" or "<results>" in question:
        return text(f"Answer for [{token}]: see the first result [1].")
    if messages[0]["role"] == "system" and messages[0]["content"] == REWRITE:
        return text(question.split("]", 1)[1].strip())
    return tool_call("search_papers", query=question.split("]", 1)[1].strip())


class RealisticResponder:
    """The realistic stand-in (see the module's text); `latency`: the seconds each request takes, a streamed answer
    spreading most of them over its chunks."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def __call__(self, body: dict) -> dict:
        from assistant.pipeline import REWRITE

        if (probed := _probe_reply(body)) is not None:
            return probed
        messages = body["messages"]
        if (mended := mend(messages)) is not None:
            return text(mended, words=WORDS_PER_CHUNK, over=(1 - FIRST_TOKEN) * self.latency)
        last, token, topic = asked(messages)
        if messages[0]["role"] == "system" and messages[0]["content"] == REWRITE:
            return text(topic)
        if "<results>" in str(messages[last]["content"]):
            return self.answer(token, topic, str(messages[last]["content"]))
        outputs = "\n".join(str(m.get("content") or "") for m in messages[last + 1 :] if m["role"] == "tool")
        made = [c["function"]["name"] for m in messages[last + 1 :] for c in m.get("tool_calls") or []]
        three = zlib.crc32(str(messages[last]["content"]).split("]", 1)[-1].encode()) % 2 == 1  # (not the token)
        call = next_call(made, topic, outputs, three)
        return call if call is not None else self.answer(token, topic, outputs)

    def answer(self, token: str, topic: str, outputs: str) -> dict:
        return text(write_answer(token, topic, outputs), words=WORDS_PER_CHUNK, over=(1 - FIRST_TOKEN) * self.latency)


FLAGGED = re.compile(r"^\d+\. (.+)\n   Why: ", re.M)


def mend(messages: list[dict]) -> str | None:
    """When the app sends back the sentences its check did not find (`assistant.claim_check.MEND`): the draft
    without them, as a model told to fix or drop them does at the least; None for any other request."""
    from assistant.claim_check import MEND

    request = str(messages[-1].get("content") or "")
    if messages[-1]["role"] != "user" or not request.startswith(MEND.split("\n", 1)[0]) or len(messages) < 2:
        return None
    draft = str(messages[-2].get("content") or "")
    for sentence in FLAGGED.findall(request):
        draft = draft.replace(sentence, "")
    return " ".join(draft.split())


def next_call(made: list[str], topic: str, outputs: str, three: bool) -> dict | None:
    """The turn's next tool call, or None when it is time to answer: `search_papers`, `get_paper` on the best paper
    it found (when `three`), then `search_fulltext`."""
    plan = ["search_papers", "get_paper", "search_fulltext"] if three else ["search_papers", "search_fulltext"]
    first = PAPER.search(outputs)
    for name in plan[len(made) :]:
        if name == "search_papers":
            return tool_call(name, query=topic, limit=5)
        if name == "get_paper" and first is not None:
            return tool_call(name, paper_id=first.group(4))
        if name == "search_fulltext":
            return tool_call(name, query=topic, limit=4)
    return None


def _plain(said: str, words: int = 60) -> str:
    """A tool's (markdown-escaped) text as a quote: unescaped, brackets made round (a quoted "[12]" must not read as
    a citation of a paper the tools never numbered), at most `words` words."""
    cleaned = said.replace("\\", "").replace("[", "(").replace("]", ")").replace('"', "'")
    kept = cleaned.split()
    return " ".join(kept[:words]) + (" …" if len(kept) > words else "")


def _sentences(topic: str, outputs: str) -> tuple[list[str], list[int]]:
    """What the tools found, as the answer's sentences, and the numbers they cite."""
    said, cited = [], []
    papers = list(PAPER.finditer(outputs))
    for found in papers[:4]:
        n, title, byline = found.group(1), _plain(found.group(2), 25), _plain(found.group(3), 12)
        cited.append(int(n))
        said.append(f"{title} [{n}]" + (f", by {byline}," if byline else "") + f" bears on {topic}.")
        block = outputs[found.end() : found.end() + 3000].split("\n[", 1)[0]  # its lines, up to the next paper's
        if (match := MATCHING.search(block)) is not None:
            said.append(f'Its abstract says that "{_plain(match.group(1), 45)}" [{n}].')
    if (abstract := ABSTRACT.search(outputs)) is not None:
        n = abstract.group(1)
        said.append(f'Reading the paper\'s page, {_plain(abstract.group(2), 20)} [{n}] describes its aim as follows: '
                    f'"{_plain(abstract.group(3), 50)}" [{n}].')  # fmt: skip
        cited.append(int(n))
    for passage in list(PASSAGE.finditer(outputs))[:2]:
        n, page = passage.group(1), passage.group(2)
        said.append(f'The full text of {_plain(passage.group(3), 20)} goes further; on page {page} it reads '
                    f'"{_plain(passage.group(4), 40)}" [{n}, p. {page}].')  # fmt: skip
        cited.append(int(n))
    return said, list(dict.fromkeys(cited))


def write_answer(token: str, topic: str, outputs: str, words: int = WORDS) -> str:
    """About `words` words on `topic` from the tools' `outputs`, opening with "Answer for [token]:" (what the
    benchmark reads back), every [n] one the tools gave."""
    said, cited = _sentences(topic, outputs)
    head = f"Answer for [{token}]: " if token else ""
    if not cited:
        return head + f"the archive holds nothing that answers {topic} well; the searches found no paper on it."
    bridges = [
        "Taken together, {a} and {b} approach {topic} from different directions, and their results are best "
        "read side by side.",
        "Where {a} states a result in general terms, {b} gives the details a reader would need to check it.",
        "None of these papers settles every question about {topic}; {a} is the best place to start reading.",
        "The evidence above comes from the abstracts and, where the archive holds the PDF, from the full text {b}.",
    ]
    body = [f"Here is what the archive's papers say about {topic}.", *said]
    turn = 0
    while len(" ".join(body).split()) < words:
        a, b = cited[turn % len(cited)], cited[(turn + 1) % len(cited)]
        body.append(bridges[turn % len(bridges)].format(a=f"[{a}]", b=f"[{b}]", topic=topic))
        turn += 1
    return head + _cut(" ".join(body), words + 40)


def _cut(written: str, most: int) -> str:
    """At most about `most` words, ending at a sentence's end."""
    kept = written.split(" ")
    if len(kept) <= most:
        return written
    cut = " ".join(kept[:most])
    end = max(cut.rfind(". "), cut.rfind('." '))
    return cut[: end + 1] if end > 0 else cut
