"""What went wrong with the language model, in words a self-hoster can act on.

Each failure litellm raises becomes an `LLMError` with a kind (the server cannot be reached, the key is refused, the
model is unknown, the conversation is too long for it, the provider is rate-limiting, it timed out) and a short
message with no trace and no key; the known misconfigurations (an `ollama/` chat model, an OpenAI-compatible base
URL without `/v1`, the provider's key variable unset) are named in it.
"""

from __future__ import annotations

import os

from assistant.provider import litellm_module
from common.retry import GaveUp


class LLMError(RuntimeError):
    """The language model could not answer; the message is safe to show the user. `kind` says which way."""

    def __init__(self, message: str, kind: str = "refused") -> None:
        super().__init__(message)
        self.kind = kind


def config_hints(model: str, api_base: str | None) -> list[str]:
    """What in the settings is likely wrong, whatever the failure: the mistakes the issue trackers of tools like
    this one are full of."""
    hints = []
    if model.startswith("ollama/"):
        hints.append(f"`{model}` uses Ollama's completion endpoint, which cannot call tools: try "
                     f"`ollama_chat/{model.split('/', 1)[1]}`")  # fmt: skip
    base = (api_base or "").rstrip("/")
    if base and model.startswith(("openai/", "hosted_vllm/")) and not base.endswith("/v1"):
        hints.append(f"an OpenAI-compatible server's base URL usually ends in /v1 (`{base}/v1`)")
    return hints


def missing_key(model: str, api_key: str | None) -> str | None:
    """The provider's key variable when it is unset and no key is configured (litellm knows each provider's)."""
    if api_key:
        return None
    try:
        found = litellm_module().validate_environment(model=model)
    except Exception:  # an unknown provider: nothing to say
        return None
    missing = [k for k in found.get("missing_keys") or [] if k.endswith("_KEY") and not os.environ.get(k)]
    return ", ".join(missing) or None


def _shown(api_base: str | None) -> str:
    """The base URL as it may be shown: without a user, password or query (keys sometimes travel there)."""
    from urllib.parse import urlsplit

    if not api_base:
        return ""
    parts = urlsplit(api_base)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


def _never_connected(exc: BaseException) -> bool:
    """Whether the request never reached a server (refused, no route, no such host): litellm reports that as a 500
    for OpenAI-compatible providers, with the connection error underneath."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, (ConnectionError, OSError)) or type(exc).__name__ in ("ConnectError", "APIConnectionError"):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def describe(exc: BaseException, model: str, api_base: str | None, api_key: str | None, timeout: float) -> LLMError:
    """The `LLMError` for a litellm failure (after our retries, when `exc` is `GaveUp`)."""
    import litellm

    cause = exc.__cause__ if isinstance(exc, GaveUp) and exc.__cause__ is not None else exc
    where = _shown(api_base) or f"{model.split('/', 1)[0]}'s default address"
    status = getattr(cause, "status_code", None)
    if isinstance(cause, litellm.ContextWindowExceededError):
        kind, text = "context", "the conversation and what search found are longer than the model's context window"
    elif isinstance(cause, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (401, 403):
        kind, text = "auth", f"the model's provider refused the API key ({status or 401})"
        if variable := missing_key(model, api_key):
            text += f"; set {variable} (or SCHOLARLOOM_LLM_API_KEY)"
    elif isinstance(cause, litellm.NotFoundError) or status == 404:
        kind, text = "model", f"the provider at {where} does not know the model `{model}` (404)"
    elif isinstance(cause, litellm.RateLimitError):
        kind, text = "rate", "the model's provider is limiting requests (429); try again in a minute"
    elif isinstance(cause, litellm.Timeout):
        kind, text = "timeout", f"the model did not answer within {timeout:g} s"
    elif isinstance(cause, litellm.APIConnectionError) or _never_connected(cause):
        kind, text = "unreachable", f"the model's server at {where} cannot be reached (is it running?)"
    elif isinstance(cause, (litellm.InternalServerError, litellm.ServiceUnavailableError)):
        kind, text = "unreachable", f"the model's server at {where} failed ({status or 500}); please try again shortly"
    else:
        kind, text = "refused", f"the language model refused the request ({type(cause).__name__})"
    hints = config_hints(model, api_base)
    return LLMError("; ".join([text, *hints]), kind)
