"""The agent's tools: one explicit, ordered registry of read-only typed functions."""

from assistant.tools.base import Card, SourceBook, ToolDeps, ToolError, ToolResult, call_tool, tool_schema
from assistant.tools.citations import get_cited_by, get_references, similar_papers
from assistant.tools.compare import compare_papers
from assistant.tools.papers import check_claim, get_paper, search_fulltext, search_papers
from assistant.tools.people import (
    find_institution,
    find_researcher,
    get_institution,
    get_researcher,
    summarize_institution,
    summarize_researcher,
)

TOOLS = (
    search_papers, search_fulltext, get_paper, get_references, get_cited_by, similar_papers, compare_papers,
    find_researcher, get_researcher, summarize_researcher, find_institution, get_institution, summarize_institution,
    check_claim,
)  # fmt: skip
TOOLS_BY_NAME = {tool.__name__: tool for tool in TOOLS}

__all__ = [
    "TOOLS", "TOOLS_BY_NAME", "Card", "SourceBook", "ToolDeps", "ToolError", "ToolResult", "call_tool", "tool_schema",
    "get_paper", "search_fulltext", "search_papers", "get_references", "get_cited_by", "similar_papers", "compare_papers",
    "find_researcher", "get_researcher", "summarize_researcher", "find_institution", "get_institution",
    "summarize_institution", "check_claim",
]  # fmt: skip
