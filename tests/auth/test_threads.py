"""Who may open and write a chat thread."""

import uuid

from auth.threads import is_uuid, may_open, may_set_owner, resume_target

THREAD = str(uuid.uuid4())


def test_a_thread_is_its_owners_only_and_a_foreign_one_looks_missing():
    assert may_open("alice", "alice", THREAD)
    assert not may_open("bob", "alice", THREAD)  # the same answer as for a thread that does not exist:
    assert not may_open("bob", None, THREAD)
    assert not may_open(None, "alice", THREAD)
    assert not may_open("alice", "alice", "../../etc")  # not a thread id at all


def test_a_socket_resumes_only_into_its_own_thread_or_a_new_id():
    assert resume_target("alice", "alice", THREAD) and resume_target("alice", None, THREAD)
    assert not resume_target("bob", "alice", THREAD)
    assert not resume_target("alice", None, "1 OR 1=1")


def test_a_thread_never_changes_hands():
    assert may_set_owner(None, "u1") and may_set_owner("u1", "u1") and may_set_owner("u1", None)
    assert not may_set_owner("u1", "u2")


def test_thread_ids_are_canonical_uuids():
    assert is_uuid(THREAD) and is_uuid(THREAD.upper())
    assert not is_uuid(THREAD.replace("-", "")) and not is_uuid(None) and not is_uuid("")
