"""The objects a running server shares, built once in the entry point from the settings and kept on the app
(`app.state.runtime`; the chat's handlers find it on Chainlit's app, where `create_app` puts it)."""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass, field

from assistant.agent import Agent
from assistant.llm_process import LLMProcess
from assistant.turn import Answer, TurnUsage
from auth.accounts import create_tables, sign_in
from auth.models import Account
from auth.throttle import Throttle
from auth.usage import UsageBook, budget_notice
from common.admission import Admission
from common.metrics import Metrics
from retrieval.archive import Archive
from scholarloom.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    archive: Archive
    agent: Agent
    throttle: Throttle = field(init=False)  # sign-in failures, counted in the catalog's database
    llm_watch: object = None  # assistant.probe.ProbeWatch when a model is configured (`serve` starts it)
    metrics: Metrics = field(default_factory=Metrics)  # this server's counters (`/metrics`)
    usage: UsageBook = field(init=False)  # what each turn cost, written off the turn's path
    chat_turns: Admission = field(init=False)  # chat questions answered at once, and their line
    sign_ins: Admission = field(init=False)  # password sign-ins checked at once, and their line

    def __post_init__(self) -> None:
        self.throttle = Throttle(self.archive.catalog.engine)
        self.usage = UsageBook(self.archive.catalog.engine)
        self.chat_turns = Admission("chat", self.settings.chat, noun="question")  # (`chatui.busy`)
        self.sign_ins = Admission("sign_in", self.settings.sign_in, noun="sign-in")
        self.metrics.watch(self.chat_turns)
        self.metrics.watch(self.sign_ins)
        tally = lambda: self.jobs.tally()  # noqa: E731 - read at each scrape
        self.metrics.read_when_scraped("scholarloom_jobs", "Jobs by kind and state.", ["kind", "state"],
                                       lambda: [((k, s), n) for k, s, n, _ in tally()])  # fmt: skip
        self.metrics.read_when_scraped("scholarloom_job_seconds", "Seconds the finished jobs took, summed, by kind.",
                                       ["kind"], lambda: list({(k,): t for k, _, _, t in tally()}.items()))  # fmt: skip
        self.metrics.read_when_scraped("scholarloom_index_points", "Points in the vector index, by kind.", ["kind"],
                                       lambda: [((k,), n) for k, n in self.archive.index_points().items()])  # fmt: skip
        if self.agent.llm is not None:
            from assistant.probe import ProbeWatch
            from jobs.queue import worker_name

            # Every server's line is kept with its worker row, so any server's admin page shows them all.
            say = lambda line: self.jobs.say_model(worker_name(), os.getpid(), line)  # noqa: E731
            self.llm_watch = watch = ProbeWatch(self.agent.llm, on_probe=say)

            def probed_tools() -> bool | None:  # what the model did when asked to call a tool, once it answered
                found = watch.latest
                return found.calls_tools if found is not None and found.answers else None

            self.agent.probed_tools = probed_tools

    def start_llm_process(self, log_setup: tuple):
        """The chat's model requests in a child process from now on (`assistant.llm_process`); None without a
        model, or when the agent was given a retry policy of its own (which cannot cross to the child)."""
        if self.agent.llm is None or self.agent.retrier is not None:
            return None
        process = LLMProcess(log_setup)
        process.start()
        self.agent.stream = process.stream
        return process

    def llm_status(self) -> str:
        """What admins read about the model: the last probe's line, or that there is none."""
        if self.llm_watch is None:
            return "no language model (SCHOLARLOOM_LLM unset): the chat answers in retrieval-only mode"
        return self.llm_watch.summary()

    @classmethod
    def build(cls, settings: Settings) -> "Runtime":
        create_tables(settings.catalog().engine)
        agent = Agent(settings.llm_config(), max_tool_rounds=settings.agent.max_tool_rounds, tools=settings.llm_tools,
                      citations=settings.llm_citations)  # fmt: skip
        return cls(settings, settings.archive(), agent)

    @property
    def uploads(self):
        """Users' own PDFs (`retrieval.library.uploads`), in the catalog's database and `<data dir>/uploads`."""
        return self.settings.uploads()

    @property
    def upload_limits(self):
        return self.settings.upload_limits()

    @property
    def jobs(self):
        """The job queue in the catalog's database (papers on request, ingest runs, updates)."""
        from jobs.queue import JobQueue

        return JobQueue(self.engine, self.settings.user_jobs)

    @property
    def engine(self):
        """The catalog's database, which also holds users, sign-in failures and chat history."""
        return self.archive.catalog.engine

    def job_runner(self):
        """The worker that runs every job that writes (the one writer of the embedded index), with `job_context`;
        scheduled updates when SCHOLARLOOM_UPDATE_EVERY."""
        from jobs.arguments import JobKind, UpdateArguments
        from jobs.queue import JobQueue
        from jobs.registry import job_runner
        from jobs.runner import Schedule

        every = self.settings.update_interval()
        schedule = Schedule(JobKind.UPDATE, UpdateArguments(), every) if every else None
        return job_runner(JobQueue(self.engine), self.job_context(), schedule)

    def job_context(self):
        """What this server's jobs run with: the index it answers from; an encoder of their own, in a process of its
        own (`retrieval.vectors.encoder_process`: embedding holds the GIL the request threads need), behind a vector
        book (SCHOLARLOOM_VECTOR_BOOK: the demo's); one polite HTTP client for all jobs (the pauses between requests
        hold across jobs); this server's archive for the searches of saved questions (its encoder process embeds
        documents only)."""
        from ingest.demo import with_vector_book

        shared = self.settings.fetcher()
        encoder = self.settings.encoder_processes(nice=10)

        def close() -> None:
            shared.close()
            encoder.close()

        return self.settings.job_context(self.archive.index, with_vector_book(encoder, self.settings.vector_book),
                                         clients=lambda: nullcontext(shared), close=close,
                                         searcher=lambda: self.archive)  # fmt: skip

    def sign_in(self, username: str, password: str, address: str) -> Account | None:
        account = sign_in(self.engine, self.throttle, username, password, address)
        if account is None:
            self.metrics.sign_in_failures.inc()
        return account

    def budget_notice(self, username: str) -> str | None:
        """Why `username`'s next turn may not use the model (today's token budget spent), or None."""
        budget = self.settings.llm_daily_tokens
        if self.agent.llm is None or not budget:
            return None
        return budget_notice(self.usage.tokens_today(username), budget)

    def after_turn(
        self, username: str, outcome: Answer | None, tool_times: list[tuple[str, float]], stopped: bool = False,
        usage: TurnUsage | None = None,
    ) -> None:  # fmt: skip
        """Count the turn (no outcome: stopped by the user, or broken) and its tools' and model's times; keep what
        it cost (`usage`: what a turn without an outcome had spent, a stopped one's request cut off estimated)."""
        for tool, seconds in tool_times:
            self.metrics.tool_seconds.labels(tool).observe(seconds)
        if outcome is None:
            self.metrics.turns.labels("unknown", "stopped" if stopped else "failed").inc()
            if self.agent.llm is not None and usage is not None and usage.tokens:
                self.usage.record(username, self.agent.llm.model, "stopped" if stopped else "failed",
                                  usage.prompt_tokens, usage.completion_tokens, usage.estimated, usage.cost_usd)  # fmt: skip
            return
        self.metrics.turns.labels(outcome.mode, "failed" if outcome.error else "answered").inc()
        for seconds in outcome.usage.seconds:
            self.metrics.llm_seconds.observe(seconds)
        if outcome.error_kind:
            self.metrics.llm_errors.labels(outcome.error_kind).inc()
        used = outcome.usage
        if self.agent.llm is not None and used.tokens:
            self.usage.record(username, self.agent.llm.model, outcome.mode, used.prompt_tokens,
                              used.completion_tokens, used.estimated, used.cost_usd)  # fmt: skip
