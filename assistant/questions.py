"""Whom a question names, as the catalog knows them: the researcher or institution it is about as such (the names
read by `assistant.reading`). Retrieval-only mode and the pipeline both look profiles up through here."""

from __future__ import annotations

from assistant.reading import ReadQuestion
from assistant.tools import ToolDeps
from retrieval.scholarly.upsert import normalise_name
from pages.base import institution_path, researcher_path


def named_profile(deps: ToolDeps, read: ReadQuestion) -> tuple[str, dict, str] | None:
    """The profile a question is about, when it names a researcher (a known full name) or an institution (a name
    or acronym the resolver is sure of): (summary tool, its arguments, the profile's path)."""
    for span in read.named_people:
        people = [
            c for c in deps.archive.find_researchers(span, limit=3) if c.researcher.name_key == normalise_name(span)
        ]
        if len(people) == 1:
            person = people[0].researcher
            return "summarize_researcher", {"researcher_id": person.id}, researcher_path(person.id, person.name)
    for span in read.named_places:
        hit = deps.archive.find_institution(span, threshold=0.9)
        if hit.institution is not None and hit.how.certain:
            place = hit.institution
            return "summarize_institution", {"institution": str(place.id)}, institution_path(place.id, place.name)
    return None
