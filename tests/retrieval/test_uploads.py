"""`retrieval.library.uploads`: a user's storage quota holds when uploads race it, and an upload's job counts against
the user's share of the queue."""

from __future__ import annotations

import pytest

from jobs.queue import JobQueue
from retrieval.library.uploads import MB, UploadLimits, UploadRefused, Uploads
from tests.jobs.test_queue import at_once


def _spooled(folder, n: int, size: int = MB):
    path = folder / f".incoming-{n}.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"0" * (size - 9))
    return path


def quota_holds_when_raced(uploads: Uploads, queue: JobQueue) -> None:
    """Twenty 1 MB uploads at once against a 2 MB quota store two (each read the free room, then inserted: 7.9 MB
    were stored); the others are refused as the library being full, and their spooled files are gone."""
    limits = UploadLimits(max_mb=5, quota_mb=2)
    files = [_spooled(uploads.folder, n) for n in range(20)]
    results = at_once(20, lambda n: uploads.accept("mallory", f"{n}.pdf", files[n], limits, queue))
    stored = [r for r in results if not isinstance(r, Exception)]
    refused = [r for r in results if isinstance(r, UploadRefused)]
    assert len(stored) == 2 and len(refused) == 18, results
    assert all(r.status == 413 and "library is full" in str(r) for r in refused)
    assert uploads.used_bytes("mallory") == 2 * MB and len(uploads.mine("mallory")) == 2
    assert not list(uploads.folder.glob(".incoming-*")) and len(list(uploads.folder.glob("*.pdf"))) == 2
    assert all(u.job_id for u in stored)


def test_the_quota_holds_when_raced(empty_instance):
    quota_holds_when_raced(empty_instance.uploads(), JobQueue(empty_instance.catalog().engine))


def test_an_upload_beyond_the_users_share_of_the_queue_is_refused_and_not_kept(empty_instance):
    uploads, queue = empty_instance.uploads(), JobQueue(empty_instance.catalog().engine, user_live=3)
    limits = UploadLimits(max_mb=5, quota_mb=100)
    for n in range(3):
        uploads.accept("mallory", f"{n}.pdf", _spooled(uploads.folder, n, 1000), limits, queue)
    with pytest.raises(UploadRefused, match="3 files or papers waiting") as refused:
        uploads.accept("mallory", "3.pdf", _spooled(uploads.folder, 3, 1000), limits, queue)
    assert refused.value.status == 429
    assert len(uploads.mine("mallory")) == 3 and len(list(uploads.folder.glob("*.pdf"))) == 3
    assert uploads.accept("alice", "a.pdf", _spooled(uploads.folder, 4, 1000), limits, queue).job_id  # hers is free
