"""The saved-question digests' mail (`retrieval.library.digests` keeps who wants them): the digest of what a user's
questions found, the confirmation an address gets before its first digest, and the links both carry, signed with
the server's secret so they work without signing in: stop the digests, confirm the address (this one expires)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import smtplib
import socket
import time
from dataclasses import replace
from datetime import datetime, timezone
from urllib.parse import urlencode

from retrieval.library.digests import Digests, DigestSubscription
from retrieval.library.watches import (
    QuestionChange,
    SavedQuestion,
    describe_change,
    judgement_parts,
    shown_lines,
)
from retrieval.scholarly.models import shown, utc

log = logging.getLogger(__name__)

CONFIRM_HOURS = 48  # how long a confirmation link works
CONFIRM_TIMEOUT = 10.0  # seconds the confirmation mail may take (it is sent while the user's request waits)


# The mail server itself out of reach (refused, timed out, name unknown, hung up): not one recipient's fault.
UNREACHABLE = (ConnectionError, TimeoutError, socket.gaierror, smtplib.SMTPConnectError, smtplib.SMTPServerDisconnected)


class DigestPost:
    """Writes and mails the digests that are due and the confirmations of new addresses; signs and checks links."""

    def __init__(self, mailer, base_url: str, secret: str) -> None:
        self.mailer, self.base_url = mailer, base_url.rstrip("/")
        self.key = hmac.new(secret.encode(), b"scholarloom digest unsubscribe", hashlib.sha256).digest()
        self.confirm_key = hmac.new(secret.encode(), b"scholarloom digest confirm", hashlib.sha256).digest()

    def signature(self, owner: str, nonce: str) -> str:
        return hmac.new(self.key, f"{owner}\n{nonce}".encode(), hashlib.sha256).hexdigest()[:32]

    def genuine(self, owner: str, nonce: str, signature: str) -> bool:
        return hmac.compare_digest(self.signature(owner, nonce), signature or "")

    def link(self, row: DigestSubscription) -> str:
        query = urlencode({"u": row.owner, "n": row.nonce, "s": self.signature(row.owner, row.nonce)})
        return f"{self.base_url}/unsubscribe?{query}"

    def confirm_signature(self, owner: str, nonce: str, email: str, until: int) -> str:
        said = f"{owner}\n{nonce}\n{email}\n{until}".encode()
        return hmac.new(self.confirm_key, said, hashlib.sha256).hexdigest()[:32]

    def confirm_link(self, owner: str, nonce: str, email: str, until: int) -> str:
        signature = self.confirm_signature(owner, nonce, email, until)
        query = {"u": owner, "n": nonce, "e": email, "t": until, "s": signature}
        return f"{self.base_url}/digests/confirm?{urlencode(query)}"

    def genuine_confirmation(self, owner: str, nonce: str, email: str, until: int, signature: str) -> bool:
        """A confirmation link this server made (whether it expired, `until`, is the caller's to say)."""
        return hmac.compare_digest(self.confirm_signature(owner, nonce, email, until), signature or "")

    def ask(self, owner: str, email: str) -> str:
        """Mails `email` a link that confirms it wants the digests (it says nothing a user typed but the address,
        so it carries nobody's text to a stranger); the nonce the link carries, for `Digests.subscribe`. The
        mailer's errors (and ValueError for an address it refuses) reach the caller."""
        nonce, until = secrets.token_hex(16), int(time.time()) + CONFIRM_HOURS * 3600
        text = (f"Someone asked for ScholarLoom's e-mail digests of saved questions at {self.base_url} to be sent to "
                f"this address.\n\nTo get them, open this link within {CONFIRM_HOURS} hours and confirm:\n"
                f"{self.confirm_link(owner, nonce, email, until)}\n\nIf you did not ask, do nothing: without the "
                "confirmation no digest is sent, and you will hear nothing more.\n")  # fmt: skip
        replace(self.mailer, timeout=CONFIRM_TIMEOUT).send(email, "ScholarLoom: confirm your e-mail digests", text)
        return nonce

    def address(self, paper_id: str) -> str:
        where = f"/me/library/{paper_id.split(':', 1)[1]}" if paper_id.startswith("upload:") else f"/papers/{paper_id}"
        return self.base_url + where

    def text(self, row: DigestSubscription, news: list[tuple[QuestionChange, SavedQuestion]]) -> tuple[str, str]:
        brought = describe_change([p for c, _ in news for p in c.papers])
        subject = f"ScholarLoom: {brought} for your saved questions"
        lines = [subject, ""]
        for change, question in news:
            when = shown(change.at)
            lines += [f"{describe_change(change.papers)} on \"{question.query}\" ({when})", ""]
            if (said := judgement_parts(change.judgement)) is not None:  # each [n] with its paper's address
                numbers = {words: pid for words, pid in said[1] if pid}
                lines += [f"The new evidence {said[0]} the earlier answer: {''.join(w for w, _ in said[1])}"]
                lines += [f"  {n} {self.address(pid)}" for n, pid in numbers.items()]
                lines.append("")
            for paper in change.papers:
                title, quotes = shown_lines(paper)
                lines += [f"- {title}", f"  {self.address(str(paper.get('id', '')))}"]
                lines += [f"  > {quote}" for quote in quotes]
            lines.append("")
        lines += [f"Your saved questions: {self.base_url}/me/watching",
                  f"Stop these e-mails: {self.link(row)}"]  # fmt: skip
        return subject, "\n".join(lines) + "\n"

    def deliver(self, digests: Digests, now: datetime | None = None) -> int:
        """Every due digest with news, mailed; how many were sent. Whatever fails for one subscription (the server
        refused it, the address, a bug) is logged and tried again next time: it never stops another's digest."""
        now, sent = now or datetime.now(timezone.utc), 0
        for row in digests.due(now):
            try:
                sent += self._deliver(digests, row, now)
            except UNREACHABLE as exc:  # the server, not this recipient: every other row would wait its timeout too
                log.warning("the mail server did not answer (%s): the digests due are sent next time", exc)
                break
            except Exception:  # noqa: BLE001 - one recipient's failure is logged, the others still get theirs
                log.exception("the digest for %s was not sent", row.owner)
        return sent

    def _deliver(self, digests: Digests, row: DigestSubscription, now: datetime) -> int:
        news = digests.news(row.owner, utc(row.last_sent_at or row.created_at))
        if not news:
            return 0
        subject, text = self.text(row, news)
        self.mailer.send(row.email, subject, text, {"List-Unsubscribe": f"<{self.link(row)}>",
                                                    "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"})  # fmt: skip
        digests.sent(row.id, now)
        return 1
