"""Sections of the settings: the agent's limits (SCHOLARLOOM_AGENT__*); the harvested services
(SCHOLARLOOM_SOURCES__*) are `ingest.sources.SourceSettings`; the turns of MCP calls, chat questions and sign-ins
(SCHOLARLOOM_MCP__*, SCHOLARLOOM_CHAT__*, SCHOLARLOOM_SIGN_IN__*) are `common.admission.Limits`."""

from __future__ import annotations

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

from common.admission import Limits as AdmissionLimits
from ingest.sources import SourceSettings

__all__ = ["AdmissionLimits", "AgentSettings", "ChatTurns", "SignIns", "SourceSettings"]


def _limits(name: str, doc: str, **defaults) -> type[AdmissionLimits]:
    """`AdmissionLimits` with other defaults, as a class of its own: a variable that sets one of its settings
    (SCHOLARLOOM_CHAT__AT_ONCE) leaves the others at these defaults, not at the MCP calls'."""
    fields = {key: (AdmissionLimits.model_fields[key].annotation,
                    FieldInfo.merge_field_infos(AdmissionLimits.model_fields[key], default=value))
              for key, value in defaults.items()}  # fmt: skip
    return create_model(name, __base__=AdmissionLimits, __doc__=doc, **fields)


# A turn mostly waits for the model: on two cores 24 at once queued turns at 100 readers that the CPU had room for,
# and 48 answered every turn at 400 (`bench.load --set`, BENCHMARKS.md); a
# sign-in is checked one at a time, as argon2 already takes one and a half cores, and after 30 s in line the form
# says to try again (a "user" of the sign-in line is a client address).
ChatTurns = _limits("ChatTurns", "Chat questions and card actions answered at once (SCHOLARLOOM_CHAT__*).",
                    at_once=48, per_user=2, queue=1000, queue_per_user=2, wait_seconds=60.0)
SignIns = _limits("SignIns", "Password sign-ins checked at once (SCHOLARLOOM_SIGN_IN__*).",
                  at_once=1, per_user=1, queue=1000, queue_per_user=100, wait_seconds=30.0)


class AgentSettings(BaseModel):
    """Limits on one turn of the agent."""

    max_tool_rounds: int = Field(
        4, ge=1, le=20, description="Most rounds of tool calls the model may make in one turn before it must answer."
    )
    max_tokens: int = Field(1200, ge=64, le=32000, description="Most tokens the model may write in one answer.")
    request_timeout: float = Field(60.0, gt=0, description="Seconds to wait for one LLM request before giving up.")
    history_messages: int = Field(
        20, ge=0, le=200, description="Earlier messages of the conversation sent with each turn."
    )
