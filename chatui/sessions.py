"""An open chat socket whose session has ended (user disabled, new password, signed out everywhere): the next
message or button press is refused and the socket closed; reconnecting needs a sign-in. Import only once
Chainlit's root is prepared."""

from __future__ import annotations

import asyncio

import chainlit as cl
from chainlit.server import sio

from auth.sessions import session_version
from chatui.patches import Live

ENDED = "Your session has ended. Sign in again to go on."


async def still_signed_in(live: Live) -> bool:
    user = cl.user_session.get("user")
    if user is not None and await asyncio.to_thread(live, user.identifier, session_version(user.metadata)):
        return True
    await cl.Message(content=ENDED).send()
    await sio.disconnect(cl.context.session.socket_id)
    return False
