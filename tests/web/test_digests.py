"""Saved-question digests by e-mail (`retrieval.library.watches.DigestPost`, `common.mail`), received by a real SMTP
server (aiosmtpd) on 127.0.0.1: the digest carries the new paper, its matched sentence and a signed unsubscribe link;
a digest is mailed at most once a period and only with news; the link works without signing in, once, and a forged
one does nothing."""

from __future__ import annotations

import email
import re
import socket
from email import policy

import pytest
from aiosmtpd.controller import Controller

from jobs.queue import JobQueue
from retrieval.library.watches import Digests
from tests.ingest.ondemand_fixtures import ALSO_ASKED, ASKED, recorded_routes
from tests.replay import Replay
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app
from tests.web.test_watching import QUESTION, SAME_SITE, _run


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"


@pytest.fixture
def inbox():
    box = Inbox()
    with socket.socket() as probe:  # a free port (the controller checks its server by connecting to the port)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, controller.port
    controller.stop()


async def test_a_digest_is_mailed_with_the_news_and_its_link_unsubscribes_once(empty_instance, inbox):
    box, port = inbox
    app = _app(empty_instance, smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False,
               smtp_from="ScholarLoom <digests@papers.example.org>")  # fmt: skip
    jo = client_for(app, "jo")
    refused = await jo.post("/me/watching/digest", data={"email": "not an address", "every": "day"}, headers=SAME_SITE)
    assert refused.status_code == 400
    assert (await jo.post("/me/watching/digest", data={"email": "jo@example.org", "every": "day"},
                          headers=SAME_SITE)).status_code == 303  # fmt: skip
    assert "E-mail digest: daily to jo@example.org" in (await jo.get("/me/watching.md")).text
    await jo.post("/me/watching", data={"q": QUESTION, "scope": "all"}, headers=SAME_SITE)

    replay = recorded_routes(Replay(), ASKED, ALSO_ASKED)
    queue = JobQueue(empty_instance.catalog().engine)
    queue.submit("paper", {"arxiv_id": ASKED}, "someone", key=f"paper:{ASKED}")
    jobs = _run(empty_instance, replay)
    assert "1 with news, 1 digest mailed" in jobs[0].note, jobs[0].note
    (mail,) = box.messages
    assert mail["To"] == "jo@example.org" and mail["From"] == "ScholarLoom <digests@papers.example.org>"
    assert mail["Subject"] == "ScholarLoom: 1 new paper for your saved questions"
    body = mail.get_content()
    assert f'1 new paper on "{QUESTION}"' in body and "- DiffusionBrowser: Interactive Diffusion Previews" in body
    assert "/papers/2512.13690" in body and "  > " in body
    link = re.search(r"Stop these e-mails: (\S+)", body)[1]
    assert mail["List-Unsubscribe"] == f"<{link}>" and mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

    # Within the day, news waits for the next digest: nothing more is mailed now.
    queue.submit("paper", {"arxiv_id": ALSO_ASKED}, "someone", key=f"paper:{ALSO_ASKED}")
    jobs = _run(empty_instance, replay)
    assert "0 digests mailed" in jobs[0].note and len(box.messages) == 1

    path = link.split("://", 1)[1].split("/", 1)[1]
    reader = client_for(app)  # no sign-in: the link is the proof
    forged = re.sub(r"s=[0-9a-f]+", "s=" + "0" * 32, path)
    assert (await reader.post("/" + forged)).status_code == 404
    assert (await reader.post("/" + path.replace("u=jo", "u=kim"))).status_code == 404  # signed for jo only
    asked = await reader.get("/" + path)
    assert asked.status_code == 200 and "Stop them" in asked.text  # a mail scanner's GET changes nothing
    assert Digests(empty_instance.catalog().engine).of("jo") is not None
    done = await reader.post("/" + path)
    assert done.status_code == 200 and "no more e-mail digests" in done.text
    assert Digests(empty_instance.catalog().engine).of("jo") is None
    again = await reader.post("/" + path)
    assert again.status_code == 410 and "used already" in again.text


def test_a_digest_carries_the_models_sentence_with_each_number_s_paper():
    """LLM mode: the change's cited sentence, each [n] followed by the address of the paper it names."""
    from retrieval.library.watches import DigestPost, DigestSubscription, QuestionChange, SavedQuestion

    post = DigestPost(None, "https://papers.example.org/", "a secret long enough to sign with")
    row = DigestSubscription(id=1, owner="jo", email="jo@example.org", nonce="n" * 32)
    question = SavedQuestion(id=3, owner="jo", query="video diffusion previews")
    said = {"relation": "extends", "text": "Previews come at every step [2], beyond [1].",
            "sources": {"2": ASKED, "1": "2006.12719"}}  # fmt: skip
    paper = {"id": ASKED, "title": "DiffusionBrowser", "quotes": ["Previews at every step."]}
    change = QuestionChange(question_id=3, owner="jo", papers=[paper], judgement=said)
    subject, body = post.text(row, [(change, question)])
    assert subject == "ScholarLoom: 1 new paper for your saved questions"
    assert "The new evidence extends the earlier answer: Previews come at every step [2], beyond [1]." in body
    site = "https://papers.example.org/papers"
    assert f"  [2] {site}/{ASKED}\n  [1] {site}/2006.12719" in body
