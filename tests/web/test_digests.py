"""Saved-question digests by e-mail (`web.digests`, `jobs.digests.DigestPost`, `retrieval.library.digests`,
`common.mail`), received by a real SMTP server (aiosmtpd) on 127.0.0.1: a new address gets a signed link that confirms
it, and no digest before; the digest carries the new paper, its matched sentence and a signed unsubscribe link (an
unfolded header: one click); a digest is mailed at most once a period and only with news; the links work without
signing in, once, and a forged or expired one does nothing; only an address the mail library reads back as itself is
taken, and it is the envelope's recipient; one recipient's failure stops nobody else's digest."""

from __future__ import annotations

import email
import re
import socket
import time
from datetime import UTC, datetime
from email import policy

import pytest
from aiosmtpd.controller import Controller

from jobs.queue import JobQueue
from retrieval.library.digests import Digests
from retrieval.library.watches import Watches
from tests.ingest.ondemand_fixtures import ALSO_ASKED, ASKED, recorded_routes
from tests.replay import Replay
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app
from tests.web.test_watching import QUESTION, SAME_SITE, _run


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self.raw: list[bytes] = []  # each message as it came
        self.recipients: list[list[str]] = []  # each message's envelope (RCPT TO)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        self.raw.append(envelope.content)
        self.recipients.append(list(envelope.rcpt_tos))
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


def _path(link: str) -> str:
    """A mailed link's path and query, for the in-process client."""
    return "/" + link.split("://", 1)[1].split("/", 1)[1]


def _confirmation(mail) -> str:
    """The confirmation link a confirmation mail carries."""
    assert mail["Subject"] == "ScholarLoom: confirm your e-mail digests"
    return _path(re.search(r"(\S+/digests/confirm\?\S+)", mail.get_content())[1])


def _mailing_app(settings, port: int):
    return _app(settings, smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False,
                smtp_from="ScholarLoom <digests@papers.example.org>")  # fmt: skip


async def test_a_digest_is_mailed_with_the_news_and_its_link_unsubscribes_once(empty_instance, inbox):
    box, port = inbox
    app = _mailing_app(empty_instance, port)
    jo = client_for(app, "jo")
    refused = await jo.post("/me/watching/digest", data={"email": "not an address", "every": "day"}, headers=SAME_SITE)
    assert refused.status_code == 400
    assert (await jo.post("/me/watching/digest", data={"email": "jo@example.org", "every": "day"},
                          headers=SAME_SITE)).status_code == 303  # fmt: skip
    (confirmation,) = box.messages  # the address is asked first: no digest goes to it before it says yes
    assert confirmation["To"] == "jo@example.org" and box.recipients == [["jo@example.org"]]
    assert "E-mail digest: daily, waiting for confirmation at jo@example.org" in (await jo.get("/me/watching.md")).text
    await jo.post("/me/watching", data={"q": QUESTION, "scope": "all"}, headers=SAME_SITE)

    replay = recorded_routes(Replay(), ASKED, ALSO_ASKED)
    queue = JobQueue(empty_instance.catalog().engine)
    queue.submit("paper", {"arxiv_id": ASKED}, "someone", key=f"paper:{ASKED}")
    jobs = _run(empty_instance, replay)
    assert "1 with news, 0 digests mailed" in jobs[0].note, jobs[0].note  # not confirmed yet
    reader = client_for(app)  # no sign-in: the link is the proof
    confirm = _confirmation(confirmation)
    assert "Yes, send them" in (await reader.get(confirm)).text  # a mail scanner's GET changes nothing
    assert Digests(empty_instance.catalog().engine).of("jo").confirmed_at is None
    assert (await reader.post(confirm, headers=SAME_SITE)).status_code == 200
    assert (await reader.post(confirm, headers=SAME_SITE)).status_code == 410  # once
    assert "E-mail digest: daily to jo@example.org" in (await jo.get("/me/watching.md")).text
    (question,) = Watches(empty_instance.catalog().engine).of("jo")
    await jo.post(f"/me/watching/{question.id}/run", headers=SAME_SITE)
    jobs = _run(empty_instance, replay)
    assert "1 digest mailed" in jobs[0].note, jobs[0].note  # what was found since the address was given
    mail = box.messages[1]
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
    assert "0 digests mailed" in jobs[0].note and len(box.messages) == 2

    path = _path(link)
    forged = re.sub(r"s=[0-9a-f]+", "s=" + "0" * 32, path)
    assert (await reader.post(forged)).status_code == 404
    assert (await reader.post(path.replace("u=jo", "u=kim"))).status_code == 404  # signed for jo only
    asked = await reader.get(path)
    assert asked.status_code == 200 and "Stop them" in asked.text  # a mail scanner's GET changes nothing
    assert Digests(empty_instance.catalog().engine).of("jo") is not None
    done = await reader.post(path)
    assert done.status_code == 200 and "no more e-mail digests" in done.text
    assert Digests(empty_instance.catalog().engine).of("jo") is None
    again = await reader.post(path)
    assert again.status_code == 410 and "used already" in again.text


async def test_an_address_the_mail_library_would_read_otherwise_is_refused(empty_instance, inbox):
    """One such address (an encoded word hiding a line break) made every later run of the digests fail, for every
    user; another (a comment) was mailed to a recipient other than the one checked."""
    box, port = inbox
    jo = client_for(_mailing_app(empty_instance, port), "jo")
    for address in ("=?utf-8?q?a=0D=0Ab?=@example.org", "postmaster(@example.org", '"jo smith"@example.org',
                    "jo\r\nBcc: kim@example.org", "jö@example.org", "jo..x@example.org", "jo@localhost"):  # fmt: skip
        refused = await jo.post("/me/watching/digest", data={"email": address, "every": "day"}, headers=SAME_SITE)
        assert refused.status_code == 400 and "name@example.org" in refused.text, address
    assert Digests(empty_instance.catalog().engine).of("jo") is None and box.messages == []


async def test_a_forged_expired_or_replaced_confirmation_confirms_nothing(empty_instance, inbox):
    box, port = inbox
    app = _mailing_app(empty_instance, port)
    jo, reader = client_for(app, "jo"), client_for(app)
    await jo.post("/me/watching/digest", data={"email": "jo@example.org", "every": "week"}, headers=SAME_SITE)
    link = _confirmation(box.messages[0])
    row = Digests(empty_instance.catalog().engine).of("jo")
    forged = re.sub(r"s=[0-9a-f]+", "s=" + "0" * 32, link)
    elsewhere = link.replace("e=jo%40example.org", "e=kim%40example.org")  # the signature names the address
    later = re.sub(r"t=\d+", f"t={int(time.time()) + 10**6}", link)  # and when it expires
    for bad in (forged, elsewhere, later):
        assert (await reader.post(bad, headers=SAME_SITE)).status_code == 404, bad
    post = empty_instance.digest_post(mailing=False)  # what this server signs with: a link signed, but expired
    expired = _path(post.confirm_link("jo", row.nonce, "jo@example.org", int(time.time()) - 1))
    assert (await reader.post(expired, headers=SAME_SITE)).status_code == 410
    assert (await reader.post(link, headers={"Origin": "https://evil.example"})).status_code == 403
    await jo.post("/me/watching/digest", data={"email": "jo@example.org", "every": "day"}, headers=SAME_SITE)
    assert (await reader.post(link, headers=SAME_SITE)).status_code == 410  # a newer subscription's link replaced it
    assert Digests(empty_instance.catalog().engine).of("jo").confirmed_at is None
    assert (await reader.post(_confirmation(box.messages[1]), headers=SAME_SITE)).status_code == 200
    assert Digests(empty_instance.catalog().engine).of("jo").confirmed_at is not None
    more = await jo.post("/me/watching/digest", data={"email": "kim@example.org", "every": "day"}, headers=SAME_SITE)
    assert more.status_code == 429 and len(box.messages) == 2  # a third address at once: mailed nobody


async def test_a_confirmation_the_mail_server_refuses_is_said_and_changes_nothing(empty_instance):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    jo = client_for(_mailing_app(empty_instance, port), "jo")
    failed = await jo.post("/me/watching/digest", data={"email": "jo@example.org", "every": "day"}, headers=SAME_SITE)
    assert failed.status_code == 503 and "could not be sent" in failed.text
    assert Digests(empty_instance.catalog().engine).of("jo") is None


def _confirmed(engine, owner: str, address: str) -> None:
    """A subscription stored as a confirmed one, with one change for its owner to be mailed (stored directly: the
    address is not checked, as one stored before the check)."""
    from sqlmodel import Session

    from retrieval.library.digests import DigestSubscription

    watches = Watches(engine)
    question = watches.save(owner, "video diffusion previews", "all", [])
    watches.record(question, [{"id": ASKED, "title": "DiffusionBrowser", "quotes": ["Previews at every step."]}])
    given = datetime(2026, 1, 1, tzinfo=UTC)
    with Session(engine) as session:
        session.add(DigestSubscription(owner=owner, email=address, nonce="n" * 32, confirmed_at=given,
                                       created_at=given))  # fmt: skip
        session.commit()


def test_one_recipient_that_fails_stops_nobody_elses_digest(empty_instance, inbox):
    from common.mail import Mailer
    from jobs.digests import DigestPost

    box, port = inbox
    engine = empty_instance.catalog().engine
    _confirmed(engine, "kim", "=?utf-8?q?a=0D=0Ab?=@example.org")  # the first row delivered raises ValueError
    _confirmed(engine, "jo", "jo@example.org")
    post = DigestPost(Mailer("127.0.0.1", port, "digests@papers.example.org", starttls=False),
                      "https://papers.example.org", "a secret long enough to sign with")  # fmt: skip
    assert post.deliver(Digests(engine)) == 1
    assert box.recipients == [["jo@example.org"]]
    assert Digests(engine).of("kim").last_sent_at is None  # tried again next time


def test_a_mail_server_out_of_reach_is_tried_once_a_run_not_once_a_recipient(empty_instance):
    """A refused connection is the server's, not a recipient's: the run stops at the first (each other row would
    wait out its own timeout on the only job worker) and every digest is sent next time."""
    import socket

    from common.mail import Mailer
    from jobs.digests import DigestPost

    engine = empty_instance.catalog().engine
    for owner in ("kim", "jo", "lee"):
        _confirmed(engine, owner, f"{owner}@example.org")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    tried = []

    class Counted(Mailer):
        def send(self, to, subject, text, headers=None):
            tried.append(to)
            return super().send(to, subject, text, headers)

    post = DigestPost(Counted("127.0.0.1", closed, "digests@papers.example.org", starttls=False, timeout=5),
                      "https://papers.example.org", "a secret long enough to sign with")  # fmt: skip
    assert post.deliver(Digests(engine)) == 0
    assert len(tried) == 1 and all(Digests(engine).of(o).last_sent_at is None for o in ("kim", "jo", "lee"))


def test_a_digest_goes_to_the_address_checked_with_its_unsubscribe_header_on_one_line(empty_instance, inbox):
    """The envelope's recipient is the address checked, never what the mail library makes of the To header; and
    `List-Unsubscribe` is written as it is (folded at 78 characters it was RFC 2047 words, no link to any client)."""
    from common.mail import Mailer
    from jobs.digests import DigestPost

    box, port = inbox
    mailer = Mailer("127.0.0.1", port, "digests@papers.example.org", starttls=False)
    with pytest.raises(ValueError):
        mailer.send("postmaster(@example.org", "hello", "text")  # was mailed to "postmaster"
    assert box.messages == []
    engine = empty_instance.catalog().engine
    _confirmed(engine, "jo-with-a-rather-long-user-name", "jo@bücher.example")
    post = DigestPost(mailer, "https://papers.example.org", "a secret long enough to sign with")
    assert post.deliver(Digests(engine)) == 1
    assert box.recipients == [["jo@xn--bcher-kva.example"]] and box.messages[0]["To"] == "jo@xn--bcher-kva.example"
    headers = box.raw[0].split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    (line,) = [h for h in headers if h.lower().startswith(b"list-unsubscribe:")]
    link = post.link(Digests(engine).of("jo-with-a-rather-long-user-name"))
    assert len(link) > 78 and line == f"List-Unsubscribe: <{link}>".encode()
    assert headers[headers.index(line) + 1][:1] not in (b" ", b"\t")  # no folded continuation


def test_a_digest_carries_the_models_sentence_with_each_number_s_paper():
    """LLM mode: the change's cited sentence, each [n] followed by the address of the paper it names."""
    from jobs.digests import DigestPost
    from retrieval.library.digests import DigestSubscription
    from retrieval.library.watches import QuestionChange, SavedQuestion

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


async def test_digests_switched_off_by_the_address_check_say_so_on_the_owners_page(empty_instance, inbox):
    """A subscription 0015 switched off (its address failed the check) is shown so, gets no digest, and is back
    once the owner gives an address again and confirms it."""
    from sqlmodel import Session

    from retrieval.library.digests import DigestSubscription

    box, port = inbox
    app = _mailing_app(empty_instance, port)
    jo, engine = client_for(app, "jo"), empty_instance.catalog().engine
    with Session(engine) as session:
        session.add(DigestSubscription(owner="jo", email="postmaster(@example.org", nonce="n" * 32,
                                       notice="Switched off by the check."))  # fmt: skip
        session.commit()
    page = (await jo.get("/me/watching.md")).text
    assert "E-mail digest: off" in page and "**Switched off:** Switched off by the check." in page
    assert Digests(engine).due(datetime.now(UTC)) == []
    await jo.post("/me/watching/digest", data={"email": "jo@example.org", "every": "day"}, headers=SAME_SITE)
    assert "Switched off" not in (await jo.get("/me/watching.md")).text
    assert (await client_for(app).post(_confirmation(box.messages[0]), headers=SAME_SITE)).status_code == 200
    assert [r.owner for r in Digests(engine).due(datetime.now(UTC))] == ["jo"]
