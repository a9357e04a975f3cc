"""`scholarloom index rebuild` while `scholarloom serve` holds the embedded index: the job runs in the server, which
builds the new index beside the one it answers from and swaps to it without a restart. (A server of its own, on the
small archive with one PDF's full text, indexed here before the server starts: a rebuild embeds every point again,
so the archive the other serve tests grow would make it long; handing an ingest to the server is
tests/scholarloom/test_jobs_serve.py's.)"""

import asyncio

import httpx

from harness.serve import child_environment, served
from ingest.demo import DEMO_DIR
from ingest.pdfs import ingest_pdf_files, pdf_files
from ingest.report import Summary
from ingest.writer import Writer
from tests.chat_server import PASSWORD
from tests.scholarloom.test_jobs_serve import SCHOLARLOOM, _keep_asking
from tests.small_archive import small_archive

ELMO = "1802.05365"
QUESTION = "deep contextualized word representations from a bidirectional language model"


def test_an_index_rebuilt_by_the_server_takes_over_without_a_restart(make_instance, tmp_path):
    """`scholarloom index rebuild` hands its job to the server, which builds the new index beside the one it
    answers from and swaps to it: the same searches give the same papers, and the chat goes on."""
    data = small_archive(tmp_path, make_instance, {"alice": PASSWORD})
    settings = make_instance(data)
    summary = Summary()
    ingest_pdf_files(Writer.of(settings.archive()),
                     pdf_files([DEMO_DIR / "pdfs" / f"{ELMO}.pdf"]), summary)  # fmt: skip
    assert summary.counts["passages"] > 20
    settings.close()
    with served(data) as (base, _process):
        _rebuild_while_asking(base, data)


def _found(base: str) -> list:
    """The papers two searches find, and the full-text passages one finds, with their pages."""
    papers = [httpx.get(f"{base}/api/search", params={"q": q}).json()["hits"] for q in (QUESTION, "citation graph")]
    passages = httpx.get(f"{base}/api/passages", params={"q": QUESTION}).json()["hits"]
    return [[h["id"] for h in hits] for hits in papers] + [[(h["id"], h["page"]) for h in passages]]


def _rebuild_while_asking(base, data) -> None:
    before = _found(base)
    assert all(before) and before[-1][0][0] == ELMO

    async def scenario():
        stop = asyncio.Event()
        asking = asyncio.create_task(_keep_asking(base, stop))
        rebuild = await asyncio.create_subprocess_exec(
            SCHOLARLOOM, "index", "rebuild", env=child_environment(data),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        output = (await rebuild.communicate())[0].decode()
        await asyncio.sleep(0.5)
        stop.set()
        return rebuild.returncode, output, await asking

    code, output, answers = asyncio.run(scenario())
    assert code == 0 and "runs there as job" in output and "index rebuild: done" in output, output
    assert "index rebuilt:" in output and (data / "qdrant" / "edge" / "scholarloom.current").is_file(), output
    assert answers and all("unavailable" not in a.lower() for a in answers)
    assert _found(base) == before
