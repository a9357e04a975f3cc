"""What a question names, read without a model: an arXiv id it mentions, a researcher or an institution it is about
as such. Retrieval-only mode and the pipeline both read questions through here."""

from __future__ import annotations

import re

from assistant.tools import ToolDeps
from retrieval.scholarly.records import NEW_ID, OLD_ID
from retrieval.scholarly.upsert import normalise_name
from web.addresses import institution_path, researcher_path

ARXIV_MENTION = re.compile(rf"\b({NEW_ID}(?:v\d+)?|{OLD_ID})\b")

# A word of a name is at most 40 characters: unbounded, each of the many starts in "A.A.A.A..." ran to the end.
_NAME = re.compile(r"\b([A-Z][\w'.-]{1,40}(?:\s+(?:[A-Z][\w'.-]{1,40}|de|van|von|da|di|del|la|le|of|for|and)){1,5})")
_ACRONYM = re.compile(r"\b([A-Z][A-Z&]{1,9})\b")
# Words of a question that asks about a person or a place as such ("What does X work on?", "Who at X has
# papers here?"); any other word means the question is about a topic, which a paper search answers better.
_PROFILE_WORDS = frozenset(
    "who what whom where which does do did is are was were has have had work works working worked on at in of "
    "about tell me us show give list the a an papers paper publications research researchers people "
    "here this archive there their his her its s summary summarize summarise profile field fields topics".split()
)


def _only_about(query: str, span: str) -> bool:
    rest = re.findall(r"[a-z]+", query.replace(span, " ").lower())
    return all(word in _PROFILE_WORDS for word in rest)


def named_profile(deps: ToolDeps, query: str) -> tuple[str, dict, str] | None:
    """The profile a question is about, when it names a researcher (a known full name) or an institution (a name
    or acronym the resolver is sure of): (summary tool, its arguments, the profile's path)."""
    for span in _NAME.findall(query):
        if not _only_about(query, span):
            continue
        people = [
            c for c in deps.archive.find_researchers(span, limit=3) if c.researcher.name_key == normalise_name(span)
        ]
        if len(people) == 1:
            person = people[0].researcher
            return "summarize_researcher", {"researcher_id": person.id}, researcher_path(person.id, person.name)
    for span in [*_NAME.findall(query), *_ACRONYM.findall(query)]:
        if not _only_about(query, span):
            continue
        hit = deps.archive.find_institution(span, threshold=0.9)
        if hit.institution is not None and hit.how.certain:
            place = hit.institution
            return "summarize_institution", {"institution": str(place.id)}, institution_path(place.id, place.name)
    return None
