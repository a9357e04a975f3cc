"""Who may sync what (`web.zotero`, `jobs.zotero`, revision 0016): the Zotero desktop on the server's machine is
offered to admins only, refused to anyone else even through a crafted form, refused by the sync itself to an owner
no longer an admin, and a connection someone else made before is switched off by the migration with a notice; a
sync counts in its user's share of the queue and the forms in their rate of writes, each refusal said on the page."""

from __future__ import annotations

from bs4 import BeautifulSoup
from sqlalchemy import text

from auth.accounts import set_admin
from ingest.http import PoliteClient
from jobs.queue import JobQueue, JobState
from jobs.arguments import JobKind
from retrieval.library.zotero import Libraries, ZoteroLibrary
from retrieval.upkeep.schema import migrate
from tests.replay import Replay, public_resolver
from tests.web.test_follow import client_for
from tests.web.test_paper_requests import _app, _run_jobs
from tests.web.test_zotero import KEY, SAME_SITE

DESKTOP = "http://localhost:23119/api"
ONLY_ADMINS = "Only an admin may sync the Zotero desktop of this server"
LOCAL = {"kind": "user", "library_id": "", "source": "local"}


def _desktop(instance):
    instance.sources.zotero_local_url = DESKTOP
    app = _app(instance, on_demand="off")
    set_admin(instance.catalog().engine, "jo", True)
    return app


def _run_desktop(instance) -> list:
    """The job worker, Zotero 7 desktop's local API answering (an empty library at version 5)."""
    replay = Replay()
    for path in ("/api/users/0/collections", "/api/users/0/items"):
        replay.add("GET", "localhost", path, b"[]", headers={"Last-Modified-Version": "5", "Total-Results": "0"})
    replay.add("GET", "localhost", "/api/users/0/deleted", {"collections": [], "items": []},
               headers={"Last-Modified-Version": "5"})  # fmt: skip

    def client(_replay) -> PoliteClient:
        return PoliteClient(user_agent="ScholarLoom-test/0", allowed_hosts=["localhost"], transport=replay.transport(),
                            resolve=public_resolver, sleep=lambda _s: None, private_hosts=["localhost:23119"])

    return _run_jobs(instance, replay, client=client, seconds=60)


def _offered(page) -> list[str]:
    select = BeautifulSoup(page.text, "html.parser").select_one("form.connect select[name=source]")
    return [o["value"] for o in select.select("option")] if select else []


async def test_the_desktop_library_is_the_admins_alone(empty_instance):
    app = _desktop(empty_instance)
    jo, kim = client_for(app, "jo"), client_for(app, "kim")
    assert _offered(await kim.get("/me/zotero")) == [] and _offered(await jo.get("/me/zotero")) == ["web", "local"]
    for kind in ("user", "group"):  # the option is not shown to kim; a form made by hand is refused all the same
        crafted = await kim.post("/me/zotero", data={**LOCAL, "kind": kind, "library_id": "7"}, headers=SAME_SITE)
        assert crafted.status_code == 400 and "Only an admin may connect the Zotero desktop" in crafted.text
    libraries = Libraries(empty_instance.catalog().engine)
    assert libraries.of("kim") == []

    assert (await jo.post("/me/zotero", data=LOCAL, headers=SAME_SITE)).status_code == 303
    sync = next(j for j in _run_desktop(empty_instance) if j.kind == JobKind.ZOTERO)
    assert sync.state == JobState.DONE, sync.error
    (row,) = libraries.of("jo")
    assert (row.source, row.state, row.version) == ("local", "synced", 5)

    # jo is no longer an admin when the sync queued before runs: the sync refuses, and switches the library off
    assert (await jo.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)).status_code == 303
    set_admin(empty_instance.catalog().engine, "jo", False)
    sync = next(j for j in _run_desktop(empty_instance) if j.kind == JobKind.ZOTERO)
    assert sync.state == JobState.FAILED and ONLY_ADMINS in sync.error
    (row,) = libraries.of("jo")
    assert (row.state, row.version) == ("off", 5) and ONLY_ADMINS in row.last_error
    again = await jo.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)  # and the page no longer queues one
    assert again.status_code == 403 and ONLY_ADMINS in again.text
    assert JobQueue(empty_instance.catalog().engine).live(f"zotero:{row.id}") is None


async def test_the_migration_switches_off_a_desktop_library_someone_else_connected(empty_instance):
    """Made before revision 0016: kim's desktop library (kim is no admin) is switched off with a notice, and its sync
    refused; jo's (an admin) and kim's zotero.org library are left as they were, and jo's still syncs."""
    app = _desktop(empty_instance)
    engine = empty_instance.catalog().engine
    libraries = Libraries(engine)
    for owner, source in (("kim", "local"), ("jo", "local"), ("kim", "web")):
        row = libraries.connect(owner, "user", "0" if source == "local" else "4567890", source, "sealed")
        libraries.update(row.id, state="synced", version=5)
    with engine.begin() as connection:  # as revision 0015 left the database
        connection.execute(text("UPDATE alembic_version SET version_num = '0015'"))
    assert migrate(engine).current == "0015"
    states = {(r.owner, r.source): (r.state, r.version, r.last_error) for r in _all(engine)}
    assert states[("kim", "local")][:2] == ("off", 5) and ONLY_ADMINS in states[("kim", "local")][2]
    assert states[("jo", "local")] == states[("kim", "web")] == ("synced", 5, None)
    kim = client_for(app, "kim")
    listing = (await kim.get("/me/zotero.md")).text
    assert "Zotero desktop user 0): off, version 5" in listing and ONLY_ADMINS in listing

    kims = next(r for r in libraries.of("kim") if r.source == "local")
    JobQueue(engine).submit(JobKind.ZOTERO, {"library": kims.id, "owner": "kim"}, "kim", key=f"zotero:{kims.id}")
    sync = next(j for j in _run_desktop(empty_instance) if j.kind == JobKind.ZOTERO)
    assert sync.state == JobState.FAILED and ONLY_ADMINS in sync.error
    jos = libraries.of("jo")[0]
    assert (await client_for(app, "jo").post(f"/me/zotero/{jos.id}/sync", headers=SAME_SITE)).status_code == 303
    sync = next(j for j in _run_desktop(empty_instance) if j.kind == JobKind.ZOTERO)
    assert sync.state == JobState.DONE, sync.error


def _all(engine) -> list[ZoteroLibrary]:
    from sqlmodel import Session, select

    with Session(engine) as session:
        return list(session.exec(select(ZoteroLibrary)))


async def test_a_sync_counts_in_the_users_share_and_the_forms_in_their_rate(empty_instance):
    app = _app(empty_instance, on_demand="off", user_jobs=1)
    engine = empty_instance.catalog().engine
    JobQueue(engine, 1).submit("paper", {"arxiv_id": "2004.07180"}, "kim", for_user=True)  # kim's one job waits
    kim = client_for(app, "kim")
    connected = await kim.post("/me/zotero", data={"kind": "user", "library_id": "4567890", "key": KEY},
                               headers=SAME_SITE)  # fmt: skip
    assert connected.status_code == 429, connected.text
    error = BeautifulSoup(connected.text, "html.parser").select_one("p.error").get_text(" ", strip=True)
    assert error.startswith("Connected, not synced:") and "try again when some are done" in error
    (row,) = Libraries(engine).of("kim")
    assert row.state == "new" and JobQueue(engine).live(f"zotero:{row.id}") is None
    synced = await kim.post(f"/me/zotero/{row.id}/sync", headers=SAME_SITE)
    assert synced.status_code == 429 and "Not synced:" in synced.text

    for _ in range(28):  # 30 writes a minute: two made above
        bad = await kim.post("/me/zotero", data={"kind": "user", "library_id": "1", "key": "short"}, headers=SAME_SITE)
        assert bad.status_code == 400
    slow = await kim.post("/me/zotero", data={"kind": "user", "library_id": "1", "key": KEY}, headers=SAME_SITE)
    assert slow.status_code == 429 and "Too many changes" in slow.text and int(slow.headers["retry-after"]) >= 1
    assert len(Libraries(engine).of("kim")) == 1
