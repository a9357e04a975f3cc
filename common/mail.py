"""Sending e-mail through the configured SMTP server (saved-question digests and their confirmations): plain text,
one message at a time, to an address `checked_address` accepted."""

from __future__ import annotations

import re
import smtplib
import ssl
from dataclasses import dataclass
from email import errors, policy
from email.generator import BytesGenerator
from email.headerregistry import Address
from email.message import EmailMessage
from io import BytesIO

# Headers are written unfolded up to RFC 5322's 998 characters: folded, a long `List-Unsubscribe` URL (no space to
# fold at) goes out as RFC 2047 encoded words, which no mail client reads as a link (RFC 8058's one click fails).
# The body is encoded before, under the 78-character policy (quoted-printable lines stay within RFC 2045's 76).
UNFOLDED = policy.SMTP.clone(max_line_length=998)
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = re.compile(rf"{_ATOM}(?:\.{_ATOM})*")  # RFC 5322's dot-atom, ASCII only
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_TOP = re.compile(r"[a-z]{2,63}|xn--[a-z0-9-]{1,59}")
REFUSED = "Give an e-mail address such as name@example.org (plain letters, digits and dots before the @)."


def checked_address(text: str) -> str:
    """An address we may send to, as it is sent to (an internationalised domain in its ASCII form); ValueError for
    anything else. The part before the @ must be a plain ASCII dot-atom: no quotes, comments, encoded words (`=?`)
    or internationalised names (on purpose: few servers take them, and each is a way to make the address the mail
    library reads differ from the one checked), and the mail library must read the whole back as this one address."""
    local, at, domain = text.strip().rpartition("@")
    if not at or len(local) > 64 or "=?" in local or not _LOCAL.fullmatch(local):
        raise ValueError(REFUSED)
    try:
        domain = domain.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ValueError(REFUSED) from None
    labels = domain.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels) or not _TOP.fullmatch(labels[-1]):
        raise ValueError(REFUSED)
    address = f"{local}@{domain}"
    try:
        read = policy.SMTP.header_factory("To", address)
        same = Address(addr_spec=address).addr_spec == address and not read.defects
        same = same and [a.addr_spec for a in read.addresses] == [address]
    except (ValueError, IndexError, errors.HeaderParseError):  # (the library raises these on what it cannot read)
        same = False
    if not same or len(address) > 254:
        raise ValueError(REFUSED)
    return address


@dataclass(frozen=True)
class Mailer:
    host: str
    port: int
    sender: str
    user: str | None = None
    password: str | None = None
    starttls: bool = True
    timeout: float = 30.0

    def send(self, to: str, subject: str, text: str, headers: dict[str, str] | None = None) -> None:
        """One message to `checked_address(to)`, the envelope's only recipient (never what the mail library makes
        of the To header); ValueError for an address it refuses, smtplib's errors (refused, down) reach the caller."""
        to = checked_address(to)
        message = EmailMessage(policy=policy.SMTP)
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        for name, value in (headers or {}).items():
            message[name] = value
        message.set_content(text)
        data = BytesIO()
        BytesGenerator(data, policy=UNFOLDED).flatten(message)
        sender = message["From"].addresses[0].addr_spec
        with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as smtp:
            if self.starttls:
                smtp.starttls(context=ssl.create_default_context())
            if self.user:
                smtp.login(self.user, self.password or "")
            smtp.sendmail(sender, [to], data.getvalue())
