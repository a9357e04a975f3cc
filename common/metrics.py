"""What a running server counts, in Prometheus's text format (prometheus-client), on a registry of its own (one per
app, never the library's process-wide default): requests by route and status, chat turns by mode and outcome,
tool and LLM latencies, LLM errors by kind, sign-in failures; jobs and the index's size are read when scraped."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

LATENCY = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("scholarloom_http_requests", "HTTP requests by route and status.",
                                ["route", "status"], registry=r)  # fmt: skip
        self.turns = Counter("scholarloom_chat_turns", "Chat turns by mode (agent, pipeline, retrieval-only) and "
                             "outcome (answered, failed, stopped).", ["mode", "outcome"], registry=r)  # fmt: skip
        self.tool_seconds = Histogram("scholarloom_tool_seconds", "Seconds a tool call took.", ["tool"],
                                      buckets=LATENCY, registry=r)  # fmt: skip
        self.llm_seconds = Histogram("scholarloom_llm_request_seconds", "Seconds one language-model request took.",
                                     buckets=LATENCY, registry=r)  # fmt: skip
        self.llm_errors = Counter("scholarloom_llm_errors", "Language-model failures by kind.", ["kind"], registry=r)
        self.sign_in_failures = Counter("scholarloom_sign_in_failures", "Refused sign-ins.", registry=r)
        self._admissions: dict[str, object] = {}  # name -> `common.admission.Admission`, read at each scrape
        r.register(_Admissions(self._admissions))

    def watch(self, admission) -> None:
        """An admission's turns (`common.admission.Admission`) in /metrics under its name: running, waiting, and
        since start admitted and refused by reason."""
        self._admissions[admission.name] = admission

    def read_when_scraped(self, name: str, help_text: str, labels: list[str],
                          read: Callable[[], Iterable[tuple[tuple[str, ...], float]]]) -> None:  # fmt: skip
        """A gauge whose values (label values -> value) are read at each scrape (jobs, the index's size)."""
        self.registry.register(_Read(name, help_text, labels, read))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Read(Collector):
    def __init__(self, name: str, help_text: str, labels: list[str], read) -> None:
        self.name, self.help_text, self.labels, self.read = name, help_text, labels, read

    def describe(self):
        return [GaugeMetricFamily(self.name, self.help_text, labels=self.labels)]

    def collect(self):
        family = GaugeMetricFamily(self.name, self.help_text, labels=self.labels)
        for values, value in self.read():
            family.add_metric(list(values), value)
        yield family


class _Admissions(Collector):
    def __init__(self, admissions: dict) -> None:
        self.admissions = admissions

    def collect(self):
        running = GaugeMetricFamily("scholarloom_admission_running", "Work holding a turn, by kind.", labels=["kind"])
        waiting = GaugeMetricFamily("scholarloom_admission_waiting", "Work waiting in line for a turn, by kind.",
                                    labels=["kind"])  # fmt: skip
        admitted = CounterMetricFamily("scholarloom_admission_admitted", "Work given a turn, by kind.",
                                       labels=["kind"])  # fmt: skip
        refused = CounterMetricFamily("scholarloom_admission_refused", "Work refused a turn (the line full, the "
                                      "user's share of it full, waited too long), by kind and reason.",
                                      labels=["kind", "reason"])  # fmt: skip
        for name, admission in sorted(self.admissions.items()):
            now = admission.snapshot()
            running.add_metric([name], now.running)
            waiting.add_metric([name], now.waiting)
            admitted.add_metric([name], now.admitted)
            for reason, count in now.refused.items():
                refused.add_metric([name, reason], count)
        yield from (running, waiting, admitted, refused)


class CountRequests:
    """ASGI middleware: every HTTP request counted by its route's template (never the raw path, whose ids would make
    a series per paper) and status."""

    def __init__(self, app, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        status = [500]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.metrics.requests.labels(_route(scope), str(status[0])).inc()


def _route(scope) -> str:
    route = scope.get("route")
    if route is not None and getattr(route, "path", None):
        return route.path
    path = scope.get("path", "")
    for mount in ("/chat", "/static"):
        if path == mount or path.startswith(mount + "/"):
            return mount + "/*"
    return "unmatched"

