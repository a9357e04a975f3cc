"""The agent's tools: one explicit, ordered registry of read-only typed functions."""

from assistant.tools.base import Card, SourceBook, ToolDeps, ToolError, ToolResult, call_tool, tool_schema
from assistant.tools.papers import get_paper, search_fulltext, search_papers

TOOLS = (search_papers, search_fulltext, get_paper)
TOOLS_BY_NAME = {tool.__name__: tool for tool in TOOLS}

__all__ = [
    "TOOLS", "TOOLS_BY_NAME", "Card", "SourceBook", "ToolDeps", "ToolError", "ToolResult", "call_tool", "tool_schema",
    "get_paper", "search_fulltext", "search_papers",
]  # fmt: skip
