"""cao-otel on real kernels (tmux, mock agents, the SQLite inbox): the spans and metrics of a team's run,
recorded in memory; the same exported over OTLP/HTTP to a real receiver on 127.0.0.1; inert when not
switched on; and the span bookkeeping under any order of events."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationRequest,
    DelegationResult,
    DeliveryReceipt,
    Message,
    StatusReport,
    Terminal,
    TerminalStatus,
)
from cao_otel.plugin import OtelPlugin
from cao_otel.telemetry import Telemetry
from cao_testkit.waiting import eventually


def _memory():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    return tracer_provider, MeterProvider(metric_readers=[reader]), spans, reader


def _points(reader) -> dict[str, list]:
    found: dict[str, list] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def _kernel(make_kernel, plugin):
    kernel = make_kernel()
    kernel.register_plugin(plugin, name="otel_test")
    for name in ("supervisor", "developer"):
        kernel.add_profile(AgentProfile(name=name, provider="mock_cli"))
    return kernel


async def test_a_team_run_is_one_trace_per_session_with_turns_delegations_and_deliveries(make_kernel,
                                                                                         workdir):
    tracer_provider, meter_provider, spans, reader = _memory()
    async with _kernel(make_kernel, OtelPlugin(tracer_provider=tracer_provider,
                                               meter_provider=meter_provider)) as kernel:
        boss = await kernel.create_session(CreateTerminalRequest(agent_profile="supervisor",
                                                                 working_directory=workdir))
        done = await kernel.handoff(boss.id, "developer", "write it", timeout=30)
        assert done.success, done.message
        worker = await kernel.assign(boss.id, "developer", "review it")
        await kernel.wait_for_status(worker.terminal_id, {TerminalStatus.COMPLETED}, timeout=20)
        note = await kernel.send_message(worker.terminal_id, boss.id, "all good")
        await eventually(lambda: any(s.name == f"deliver {note.id}" for s in spans.get_finished_spans()),
                         timeout=10)
        live = _points(reader)["cao.terminals.live"]
        assert sum(p.value for p in live) == 2  # the handoff's worker is gone already
        await kernel.delete_session(boss.session_name)

    by_name = {s.name: s for s in spans.get_finished_spans()}
    session = by_name[f"session {boss.session_name}"]
    boss_span = next(s for s in spans.get_finished_spans()
                     if s.name == "terminal supervisor" and s.attributes["gen_ai.agent.id"] == boss.id)
    assert boss_span.parent.span_id == session.context.span_id
    assert boss_span.attributes["gen_ai.operation.name"] == "create_agent"
    handoff = by_name["handoff developer"]
    assert handoff.parent.span_id == boss_span.context.span_id and handoff.attributes["cao.success"] is True
    assert by_name["assign developer"].attributes["cao.caller.id"] == boss.id
    turns = [s for s in spans.get_finished_spans() if s.name == "turn developer"]
    assert all(t.attributes["gen_ai.operation.name"] == "invoke_agent" for t in turns)
    # Each worker's task was one completed turn; the handoff's worker then took cao's exit command and
    # was removed during it.
    assert sorted(t.attributes["cao.status"] for t in turns) == ["completed", "completed", "deleted"]
    delivery = by_name[f"deliver {note.id}"]
    assert delivery.attributes["cao.message.receiver"] == boss.id
    assert delivery.end_time >= delivery.start_time
    # The whole run is one trace, and nothing was left open for the kernel's close to end.
    assert {s.context.trace_id for s in spans.get_finished_spans()} == {session.context.trace_id}
    assert not any(s.attributes.get("cao.open_at_close") for s in spans.get_finished_spans())
    points = _points(reader)
    assert sum(p.count for p in points["cao.turn.duration"]) >= 3
    assert sum(p.count for p in points["cao.delivery.latency"]) >= 1
    assert sum(p.value for p in points["cao.terminals.live"]) == 0
    assert sum(p.value for p in points["cao.delegations"]) == 2


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]]

    def do_POST(self):  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def collector():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


async def test_switched_on_it_exports_over_otlp_http(make_kernel, workdir, collector, monkeypatch):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{collector.server_port}")
    plugin = OtelPlugin()
    async with _kernel(make_kernel, plugin) as kernel:
        assert plugin.telemetry is not None
        boss = await kernel.create_session(CreateTerminalRequest(agent_profile="supervisor",
                                                                 working_directory=workdir))
        await kernel.handoff(boss.id, "developer", "write it", timeout=30)
    # The kernel's close flushed both exporters before it returned.
    assert plugin.telemetry is None
    paths = {path for path, _ in collector.received}
    assert {"/v1/traces", "/v1/metrics"} <= paths
    names = set()
    for path, body in collector.received:
        if path == "/v1/traces":
            for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
                service = {a.key: a.value.string_value for a in resource.resource.attributes}["service.name"]
                assert service == "cao"
                names |= {span.name for scope in resource.scope_spans for span in scope.spans}
    assert {"handoff developer", "turn developer", "terminal supervisor"} <= names
    # The supervisor's session outlived the kernel: its spans were ended by the close, and say so.
    assert f"session {boss.session_name}" in names


def test_installed_but_not_switched_on_it_loads_no_opentelemetry():
    program = (
        "import sys, asyncio; from cao_otel.plugin import OtelPlugin\n"
        "p = OtelPlugin(); p.cao_startup(kernel=None)\n"
        "assert p.telemetry is None and p.cao_shutdown() is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "OTEL_SDK_DISABLED": "true"}
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_one_provider_without_the_other_is_refused():
    tracer_provider, _, _, _ = _memory()
    with pytest.raises(ValueError, match="both"):
        OtelPlugin(tracer_provider=tracer_provider)


# -- the bookkeeping, under any order of events --------------------------------------------------

IDS = ("aaaaaaa1", "aaaaaaa2", "aaaaaaa3")
STATUSES = st.sampled_from(list(TerminalStatus))


def _terminal(i: int) -> Terminal:
    return Terminal(id=IDS[i], name=f"dev-{i}", session_name=f"s{i % 2}", provider="mock_cli",
                    agent_profile="developer", caller_id=IDS[0] if i else None, created_at=1.0 + i)


EVENTS = st.one_of(
    st.tuples(st.just("created"), st.integers(0, 2)),
    st.tuples(st.just("killed"), st.integers(0, 2)),
    st.tuples(st.just("session_killed"), st.integers(0, 1)),
    st.tuples(st.just("status"), st.integers(0, 2), STATUSES, st.text(max_size=300)),
    st.tuples(st.just("delegate"), st.integers(0, 2), st.sampled_from(["handoff", "assign"])),
    st.tuples(st.just("finished"), st.integers(0, 2), st.sampled_from(["handoff", "assign"]), st.booleans()),
    st.tuples(st.just("queued"), st.integers(1, 4), st.integers(0, 2)),
    st.tuples(st.just("delivered"), st.integers(1, 4)),
    st.tuples(st.just("failed"), st.integers(1, 4)),
    st.tuples(st.just("dead"), st.integers(1, 4)),
)


def _message(number: int, sender: int = 0) -> Message:
    return Message(id=number, sender_id=IDS[sender], receiver_id=IDS[(sender + 1) % 3], body="x",
                   state="pending", created_at=2.0)


@settings(max_examples=150, deadline=None)
@given(st.lists(EVENTS, max_size=40))
def test_every_span_ends_exactly_once_whatever_the_order_of_events(events):
    tracer_provider, meter_provider, spans, _ = _memory()
    telemetry = Telemetry(tracer_provider, meter_provider)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("opentelemetry").addHandler(handler)
    try:
        for event in events:
            kind, *args = event
            if kind == "created":
                telemetry.terminal_created(_terminal(args[0]))
            elif kind == "killed":
                telemetry.terminal_killed(_terminal(args[0]))
            elif kind == "session_killed":
                telemetry.session_killed(f"s{args[0]}")
            elif kind == "status":
                telemetry.status_changed(_terminal(args[0]), StatusReport(status=args[1], evidence=args[2]))
            elif kind == "delegate":
                request = DelegationRequest(kind=args[1], caller_id=IDS[0], agent_profile="developer",
                                            message="m")
                telemetry.delegation_started(args[1], request, _terminal(args[0]))
            elif kind == "finished":
                telemetry.delegation_finished(args[1], DelegationResult(
                    kind=args[1], success=args[2], message="m", agent_profile="developer",
                    terminal_id=IDS[args[0]]))
            elif kind == "queued":
                telemetry.message_queued(_message(args[0], args[1]))
            elif kind == "delivered":
                telemetry.message_delivered(_message(args[0]), DeliveryReceipt(
                    message_id=args[0], terminal_id=IDS[1], delivered_at=3.0))
            elif kind == "failed":
                telemetry.message_retrying(_message(args[0]), "busy")
            else:
                telemetry.message_lost(_message(args[0]), "no attempts left")
        telemetry.close()
    finally:
        logging.getLogger("opentelemetry").removeHandler(handler)
    assert telemetry.open_spans() == 0
    finished = spans.get_finished_spans()
    assert len({s.context.span_id for s in finished}) == len(finished)
    assert all(s.end_time is not None and s.end_time >= s.start_time for s in finished)
    # The SDK logs a warning for a span ended twice or changed after its end: none.
    assert not [r for r in records if "ended" in r.getMessage().lower()]
