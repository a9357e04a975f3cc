"""Sections of the settings: the agent's limits (SCHOLARLOOM_AGENT__*); the harvested services
(SCHOLARLOOM_SOURCES__*) are `ingest.sources.SourceSettings`; the turns of MCP calls (SCHOLARLOOM_MCP__*) are
`common.admission.Limits`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from common.admission import Limits as AdmissionLimits
from ingest.sources import SourceSettings

__all__ = ["AdmissionLimits", "AgentSettings", "SourceSettings"]


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
