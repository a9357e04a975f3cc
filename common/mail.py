"""Sending e-mail through the configured SMTP server (saved-question digests): plain text, one message at a time."""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage


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
        """One message; smtplib's errors (the server refused, is down) reach the caller."""
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        for name, value in (headers or {}).items():
            message[name] = value
        message.set_content(text)
        with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as smtp:
            if self.starttls:
                smtp.starttls(context=ssl.create_default_context())
            if self.user:
                smtp.login(self.user, self.password or "")
            smtp.send_message(message)
