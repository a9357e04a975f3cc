"""Where the index lives (the embedded engine's folder, or a Qdrant server's collection), and how a rebuilt index
is made beside the one in use and then takes its place."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from retrieval.vectors.edge import EdgeStore, edge_folder, point_edge_folder
from retrieval.vectors.index import Index
from retrieval.vectors.store import VectorLayout

# A rebuilt embedded index replaces the old one in the running server; searches that started on the old one get
# this long to finish before it is closed.
SWAP_GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class IndexPlace:
    """Where the index lives: the embedded engine's folder under `path` (the one `<collection>.current` names), or
    a collection of a Qdrant server at `url`. A rebuild makes a new index beside the one in use (`beside`), then
    either drops it (`discard`) or puts it in the old one's place (`adopt`)."""

    collection: str
    path: Path | None = None
    url: str | None = None
    api_key: str | None = None
    layout: VectorLayout = VectorLayout.INT8  # how an index made here keeps its vectors

    def open(self) -> Index:
        return Index.open(self.collection, path=self.path, url=self.url, api_key=self.api_key, layout=self.layout)

    def beside(self) -> Index:
        """A new, empty index named for now: a collection `<collection>-<stamp>` of the server, or the folder
        `<collection>.<stamp>` beside the embedded one (folders an earlier rebuild left before its swap removed)."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d%H%M%S")
        if self.url:
            return Index.open(f"{self.collection}-{stamp}", url=self.url, api_key=self.api_key, layout=self.layout)
        assert self.path is not None
        in_use = edge_folder(self.path, self.collection)
        for left in in_use.parent.glob(f"{self.collection}.2*"):
            if left.is_dir() and left != in_use and left.name.removeprefix(f"{self.collection}.").isdigit():
                shutil.rmtree(left, ignore_errors=True)
        return Index(EdgeStore(in_use.with_name(f"{self.collection}.{stamp}"), layout=self.layout))

    def discard(self, new: Index) -> None:
        """A half-made index from `beside`: closed, and its folder removed (nothing of it stays on disk)."""
        new.close()
        if not self.url:
            shutil.rmtree(new.store.path, ignore_errors=True)

    def adopt(self, current: Index, new: Index, grace: float = SWAP_GRACE_SECONDS) -> str:
        """The embedded `new` serves in `current`'s place from now on, in this process (searches that started on
        the old store get `grace` seconds) and in the next (the pointer); the old folder is removed. A server's
        collection is not switched here: its name is returned for the settings. Returns where the index now is."""
        if self.url:
            name = new.store.collection
            new.close()
            return name
        assert self.path is not None
        old_folder = edge_folder(self.path, self.collection)
        point_edge_folder(self.path, self.collection, new.store.path)
        old = current.swap(new.store)
        time.sleep(grace)
        old.close()
        shutil.rmtree(old_folder, ignore_errors=True)
        return str(new.store.path)
