"""The patches of Chainlit's internals are written against one version: moving the pin must fail here first."""

import os
import re
from importlib.metadata import version

from tests.conftest import REPO


def test_the_patches_name_the_locked_chainlit(server):
    from chatui import patches

    for lock in ("requirements.lock", "requirements-dev.lock"):
        pinned = re.search(r"^chainlit==(\S+)", (REPO / lock).read_text(), re.M).group(1)
        assert pinned == patches.CHAINLIT_VERSION, f"{lock} pins chainlit {pinned}: re-read chatui/patches.py"
    assert version("chainlit") == patches.CHAINLIT_VERSION


def test_the_patches_are_in_place(server):
    import chainlit.auth.jwt
    import chainlit.server
    from chainlit.socket import sio

    from chatui import patches

    assert chainlit.server.is_thread_author is patches.is_thread_author
    assert getattr(sio.handlers["/"]["connect"], "_scholarloom", False)
    # The session secret is ours, handed over without the environment.
    assert chainlit.auth.jwt.get_jwt_secret() and "CHAINLIT_AUTH_SECRET" not in os.environ
