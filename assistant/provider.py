"""litellm as this product uses it: loaded once, offline and quiet; the client (`assistant.llm`), its failures
(`assistant.failures`), the probe and the turn's cost all take it from here."""

from __future__ import annotations

import logging
import os


def litellm_module():
    """litellm, imported on first use (seconds), offline (without this it fetches a cost map from the internet) and
    quiet. The one place it is loaded."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" printed to stdout on every provider error
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):  # its own stderr handlers: through the app's instead
        logger = logging.getLogger(name)  # (the server's format, and `common.logs.Redact` hiding keys)
        logger.handlers.clear()
        logger.propagate = True
    return litellm
