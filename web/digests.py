"""The saved questions' e-mail digests (`retrieval.library.digests`, mailed by `jobs.digests`): the form on
`/me/watching` that asks for them, the link that confirms an address, and the link in every digest that stops them.

A new address gets no digest until the link mailed to it is followed (double opt-in): the form alone would let
anyone send mail to any address. Both links work without signing in (their signature is the proof); a GET only asks,
so a mail scanner that opens a link changes nothing, and the button on that page does the work."""

from __future__ import annotations

import html
import logging
import smtplib
import time
from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from retrieval.library.digests import PERIODS, Digests, checked_address
from web.dependencies import NOT_FROM_HERE, Deps, FromThisSite, Guarded
from web.http import page_headers
from web.watching import WatcherForm, too_fast, watching_page

log = logging.getLogger(__name__)


def _asking(title: str, question: str, button: str) -> HTMLResponse:
    """A link's page: what following it would do, and the button that does it (a POST to the same address)."""
    text = (f"<!doctype html><meta charset=utf-8><title>{title}</title><main><h1>{question}</h1><form method=post>"
            f"<button type=submit>{button}</button></form></main>")  # fmt: skip
    return HTMLResponse(text, headers={**page_headers(), "Cache-Control": "no-store"})


def _said(text: str, status: int = 200) -> PlainTextResponse:
    return PlainTextResponse(text, status_code=status, headers=page_headers())


router = APIRouter(route_class=Guarded)


@router.post("/me/watching/digest", include_in_schema=False)
def ask_for_digests(request: Request, deps: Deps, user: WatcherForm, email: str = Form("", max_length=300),
                    every: str = Form("day", max_length=10)) -> Response:  # fmt: skip
    """(A plain function: the confirmation is mailed in FastAPI's thread, away from the event loop.)"""
    if slow := too_fast(request, deps, user, "Not changed"):
        return slow
    digests = Digests(deps.archive.catalog.engine)
    if every == "off":
        digests.stop(user)
        return RedirectResponse("/me/watching", status_code=303)
    if not deps.mail or deps.digests is None or every not in PERIODS:
        return watching_page(request, deps, user, 400, "Give an e-mail address, and a digest every day or every week.")
    try:
        address = checked_address(email)
    except ValueError as exc:
        return watching_page(request, deps, user, 400, str(exc))
    if not digests.waiting(user, address):  # the confirmed address: only how often changes
        digests.subscribe(user, address, every)
        return RedirectResponse("/me/watching", status_code=303)
    if wait := deps.confirmations.take(user):
        return watching_page(request, deps, user, 429, f"A confirmation was mailed a moment ago: wait "
                             f"{max(1, round(wait))} seconds before asking for another.")  # fmt: skip
    try:
        nonce = deps.digests.ask(user, address)
    except (OSError, smtplib.SMTPException, ValueError) as exc:
        log.warning("the digest confirmation for %s was not sent: %s", user, exc)
        return watching_page(request, deps, user, 503, f"The confirmation e-mail to {address} could not be sent "
                             "(the mail server did not take it); your digests are as they were. Try again later.")
    digests.subscribe(user, address, every, nonce)
    return RedirectResponse("/me/watching", status_code=303)


# The links the mails carry: no sign-in, their signature is the proof.
@router.get("/digests/confirm", include_in_schema=False)
@router.post("/digests/confirm", include_in_schema=False)
def confirm_digests(request: Request, deps: Deps, here: FromThisSite, u: str = Query("", max_length=200),
                    n: str = Query("", max_length=40), e: str = Query("", max_length=254),
                    t: int = Query(0, ge=0, le=2**40), s: str = Query("", max_length=64)) -> Response:  # fmt: skip
    """The link a confirmation mail carries: GET asks, POST (its button) confirms the address, once."""
    if deps.digests is None or not deps.digests.genuine_confirmation(u, n, e, t, s):
        return _said("This link is not one this server made.", 404)
    if t < time.time():
        return _said("This link has expired: ask for the digests again on your saved questions' page.", 410)
    if request.method == "GET":
        return _asking("Confirm the digests", f"Send the e-mail digests of saved questions to {html.escape(e)}?",
                       "Yes, send them")  # fmt: skip
    if not here:
        return _said(NOT_FROM_HERE, 403)
    if not Digests(deps.archive.catalog.engine).confirm(u, n, e):
        return _said("This link was used already, or a newer subscription replaced it: it confirms nothing.", 410)
    return _said(f"Done: the digests of saved questions will come to {e}. Each carries a link that stops them.")


@router.get("/unsubscribe", include_in_schema=False)
@router.post("/unsubscribe", include_in_schema=False)
def unsubscribe(request: Request, deps: Deps, u: str = Query("", max_length=200), n: str = Query("", max_length=40),
                s: str = Query("", max_length=64)) -> Response:  # fmt: skip
    """A digest's link: GET asks; POST (the button, or a mail client's one-click unsubscribe, RFC 8058) stops the
    digests, once."""
    if deps.digests is None or not deps.digests.genuine(u, n, s):
        return _said("This link is not one this server made.", 404)
    if request.method == "GET":
        return _asking("Stop the digests", "Stop the e-mail digests?", "Stop them")
    if not Digests(deps.archive.catalog.engine).unsubscribe(u, n):
        return _said("This link was used already, or a newer subscription replaced it: no digest is sent for it.",
                     410)  # fmt: skip
    return _said("Done: no more e-mail digests. Your saved questions stay on /me/watching.")
