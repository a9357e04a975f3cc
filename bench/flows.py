"""The product modules each flow passes through, counted by running it under `sys.setprofile`.

    .venv/bin/python -m bench.flows --data-dir /tmp/demo [--flow NAME ...] [--list]

Each flow runs in this process on a copy of `--data-dir` (a loaded demo), once to warm up (imports, caches, the
models), then once traced: every Python function called in any thread while it runs is noted by the module that
defines it, and the modules of the product's own packages (those `tests/test_layers.py` names) are counted. What
runs in a child process (the PDF worker, the encoder's process under `serve`, the model's child) is not seen here;
the in-process embedder is used, so the encoder's modules are. The flows:

- **answer-model**: a question answered by the agent with a model (the scripted OpenAI-compatible stand-in on
  127.0.0.1, reached by litellm over HTTP): one `search_papers` call, then a cited answer;
- **answer-search**: the same question in retrieval-only mode (no model configured);
- **pdf**: a PDF uploaded to a user's library (`Uploads.accept`), its `upload` job run to searchable passages;
- **snapshot**: 50 records of arXiv's bulk metadata snapshot (the demo's head of it) imported by the `snapshot`
  job into an empty archive and indexed.

Each flow begins where the product's own code takes the request over (`Chat.ask`; `Uploads.accept` and the job
runner; the job runner), so the chat's handler (`scholarloom/chat.py`) and its browser side
(`chatui/turn_ui.py`) are outside the count: add two for the served chat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("assistant", "auth", "chatui", "common", "ingest", "jobs", "pages", "retrieval", "scholarloom", "web")
QUESTION = "How can I add logging after training has finished?"
PDF = REPO / "tests/fixtures/pdfs"


class Modules:
    """The product modules whose functions were called while `record` runs, in any thread."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._files: dict[str, str | None] = {}

    def _note(self, frame, event, arg):  # (the profile hook: kept tiny, it runs on every call)
        if event == "call":
            path = frame.f_code.co_filename
            name = self._files.get(path, "?")
            if name == "?":
                name = self._files[path] = _module_of(path)
            if name is not None:
                self.seen.add(name)

    def record(self, work: Callable[[], object]) -> object:
        threading.setprofile(self._note)
        sys.setprofile(self._note)
        try:
            return work()
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # (threads started while it ran keep it until they end: their calls count)


def _module_of(path: str) -> str | None:
    try:
        relative = Path(path).resolve().relative_to(REPO)
    except ValueError:
        return None
    if relative.parts[0] not in PACKAGES or relative.suffix != ".py":
        return None
    return ".".join(relative.with_suffix("").parts).removesuffix(".__init__")


class _Quiet:
    """A turn's UI that shows nothing (the answer is what `Chat.ask` returns)."""

    async def tool_started(self, name, arguments):
        return 0

    async def tool_finished(self, handle, result):
        return None

    async def stream(self, chunk):
        return None

    async def finish(self, answer, cards):
        return None

    async def checking(self, sentences):
        return None


def answer_flow(settings, with_model: bool) -> Callable[[], Callable[[], object]]:
    from assistant.agent import Agent
    from assistant.conversation import Chat, Conversation
    from assistant.llm import LLMConfig
    from harness.llm_server import ScriptedLLM, text, tool_call

    archive = settings.archive()
    server = ScriptedLLM() if with_model else None
    if server is not None:
        server.start()

    def run() -> object:
        config = None
        if server is not None:
            server.enqueue(tool_call("search_papers", query="logging after training replayed from checkpoints"),
                           text("Hindsight logging adds log statements after training and replays them [1]."))
            config = LLMConfig(model="openai/scripted", api_base=server.api_base, api_key="bench-key", timeout=20)
        chat = Chat(Agent(config), archive, "flows", Conversation())
        return asyncio.run(chat.ask(QUESTION, _Quiet()))

    return lambda: run


def pdf_flow(settings) -> Callable[[], Callable[[], object]]:
    pdf = sorted(PDF.glob("*.pdf"))[0]
    uploads = settings.uploads()
    queue, runner = _runner(settings)
    count = [0]

    def run() -> object:
        count[0] += 1
        spooled = uploads.folder / f".incoming-flows-{count[0]}"
        shutil.copyfile(pdf, spooled)
        uploads.accept("flows", f"flows-{count[0]}.pdf", spooled, settings.upload_limits(), queue)
        while (job := queue.claim(runner.name)) is not None:  # the upload's job, and what follows it
            runner.run(job)

    return lambda: run


def snapshot_flow(settings) -> Callable[[], Callable[[], object]]:
    from ingest.demo import DEMO_DIR
    from jobs.arguments import JobKind, SnapshotArguments
    from scholarloom.settings import Settings

    snapshot = DEMO_DIR / "arxiv_metadata" / "arxiv-metadata-oai-snapshot.head200.jsonl"

    def prepare() -> Callable[[], object]:
        """An empty archive of its own (made, and its database migrated, before the trace)."""
        empty = Settings(data_dir=Path(tempfile.mkdtemp(prefix="flows-snapshot-")), shared_models_dir=settings.models_dir)
        queue, runner = _runner(empty)
        queue.submit(JobKind.SNAPSHOT, SnapshotArguments(str(snapshot), limit=50), "flows")

        def run() -> object:
            try:
                while (job := queue.claim(runner.name)) is not None:  # the snapshot's job, and what follows it
                    runner.run(job)
            finally:
                empty.close()

        return run

    return prepare


def _runner(settings):
    from jobs.queue import JobQueue
    from jobs.registry import job_runner

    queue = JobQueue(settings.catalog().engine)
    return queue, job_runner(queue, settings.job_context())


FLOWS = {"answer-model": lambda s: answer_flow(s, True), "answer-search": lambda s: answer_flow(s, False),
         "pdf": pdf_flow, "snapshot": snapshot_flow}  # fmt: skip


def main() -> None:
    from scholarloom.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="a data directory with the demo loaded")
    parser.add_argument("--flow", action="append", choices=sorted(FLOWS), help="one flow (repeat; default: all)")
    parser.add_argument("--list", action="store_true", help="also list each flow's modules")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="flows-"))
    data = scratch / "data"
    shutil.copytree(args.data_dir, data, ignore=shutil.ignore_patterns("chat-files", "models"))
    models = Path(os.environ.get("SCHOLARLOOM_SHARED_MODELS_DIR") or args.data_dir / "models")
    settings = Settings(data_dir=data, shared_models_dir=models)
    try:
        print("| flow | product modules |\n| --- | --- |")
        listed = []
        for name in args.flow or FLOWS:
            prepare = FLOWS[name](settings)  # each flow: what sets it up (not traced), then the flow itself
            prepare()()  # warm: imports, caches, the models loaded
            modules, work = Modules(), prepare()
            modules.record(work)
            print(f"| {name} | {len(modules.seen)} |")
            listed.append((name, sorted(modules.seen)))
        if args.list:
            for name, seen in listed:
                print(f"\n{name}:", *seen, sep="\n  ")
    finally:
        settings.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
