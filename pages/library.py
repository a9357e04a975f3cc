"""The pages of a user's library: the list (`/me/library`) and one uploaded file (`/me/library/<n>`), each
rendered as markdown or HTML like every page."""

from __future__ import annotations

from dataclasses import dataclass

from pages.base import LIBRARY, PageMeta, chat_path, md_escape
from retrieval.library.uploads import MB, Upload, UploadState


@dataclass(frozen=True)
class LibraryPage:
    owner: str
    items: list[Upload]
    used_mb: float
    quota_mb: int
    max_mb: int
    papers: list[tuple[str, str | None, str]] = ()  # public papers kept here: id, title (None: being fetched), path
    path: str = LIBRARY
    title: str = "My library"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(self.title, "Your own PDFs, searchable by you alone.", self.path, noindex=True)

    def to_markdown(self) -> str:
        lines = [f"# {self.title}", "", f"{len(self.items)} files, {self.used_mb:.1f} MB of {self.quota_mb} MB.", ""]
        for u in self.items:
            lines.append(f"- [{md_escape(u.title or u.filename)}]({u.path}): {u.state}, {u.pages} pages, "
                         f"{u.passages} passages")  # fmt: skip
        if self.papers:
            lines += ["", "## Papers from this archive", ""]
            lines += [f"- [{md_escape(title or pid)}]({path})" for pid, title, path in self.papers]
        lines += ["", f"Add a PDF (at most {self.max_mb} MB): POST /api/library with the multipart field `file`; a "
                  "reading list (BibTeX, RIS, CSL-JSON, or arXiv ids and DOIs): POST /api/library/import."]  # fmt: skip
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class UploadPage:
    item: Upload

    @property
    def title(self) -> str:
        return self.item.title or self.item.filename

    @property
    def chat_path(self) -> str:  # the page's chat dock opens a chat about this file (its owner's alone)
        return chat_path(paper=f"upload:{self.item.id}")

    dock_label = "this PDF"

    def meta(self, base_url: str) -> PageMeta:
        return PageMeta(self.title, f"{self.item.filename}: {self.item.state}", self.item.path, noindex=True,
                        refresh_seconds=2 if self.item.state == UploadState.QUEUED else None)  # fmt: skip

    def to_markdown(self) -> str:
        u = self.item
        lines = [f"# {md_escape(self.title)}", "", f"File: {md_escape(u.filename)} ({u.size / MB:.1f} MB). "
                 f"State: {u.state}. {u.pages} pages, {u.passages} passages.", ""]  # fmt: skip
        if u.authors:
            lines += [f"Authors: {md_escape(', '.join(u.authors))}", ""]
        if u.error:
            lines += [md_escape(u.error), ""]
        if u.paper_id:
            lines += [f"This file is the archive's paper [{md_escape(u.paper_id)}](/papers/{u.paper_id}).", ""]
        if u.abstract:
            lines += ["## Abstract", "", md_escape(u.abstract)]
        return "\n".join(lines) + "\n"
