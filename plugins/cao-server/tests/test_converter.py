"""The one converter: the JSON it writes is byte for byte what the API has always written, every record
comes back from its JSON equal (times to the microsecond), and nothing imports cattrs before it is used."""

from __future__ import annotations

import datetime
import enum
import json
import pathlib
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationResult,
    McpToolSpec,
    Message,
    OutputEvent,
    SessionInfo,
    StatusReport,
    Terminal,
    TerminalStatus,
)
from cao_server import wire
from cao_server.client import _creation_body
from cao_server.commands import _render
from cao_server.converter import from_json, to_json
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_kernel.testing import strategies as cs

T = 1767323045.123456  # 2026-01-02T03:04:05.123456Z

TERMINAL = Terminal(
    id="0badf00d", name="developer-1a2b", session_name="cao-crew", provider="mock_cli",
    agent_profile="developer", working_directory="/work/café", caller_id="deadbeef",
    allowed_tools=["fs_read", "@cao-mcp-server"], created_at=T, status="idle",
)
BARE_TERMINAL = Terminal(id="12345678", name="w", session_name="cao-s", provider="p", agent_profile="a")
REPORT = StatusReport(status="completed", evidence="mock_cli: done", since=T + 2.5)
SESSION = SessionInfo(name="cao-crew", status="active", working_directory="/work/café")
MESSAGE = Message(
    id=7, sender_id="0badf00d", receiver_id="deadbeef", body="please review ✓", state="failed",
    created_at=T, updated_at=T + 1, orchestration_type="assign", attempts=2, last_error="busy",
    idempotency_key="k-1", not_before=T + 30,
)
FRESH_MESSAGE = Message(
    id=8, sender_id="user", receiver_id="deadbeef", body="hi", state="pending", created_at=T,
)
RESULT = DelegationResult(
    kind="handoff", success=True, message="done", agent_profile="reviewer", caller_id="0badf00d",
    terminal_id="deadbeef", output="LGTM", duration=12.25,
)
PROFILE = AgentProfile(
    name="developer", description="Writes code", provider="claude_code", system_prompt="You write code.",
    allowed_tools=("fs_read",),
    mcp_servers={"cao-mcp-server": {"command": "cao-mcp-server", "args": ["--x"], "env": {}}},
    tags=("dev",), extra={"since": datetime.date(2026, 1, 2), 2: "two", True: ["yes", 2.5]},
    source="built-in", path="/p/developer.md",
)

REQUEST = CreateTerminalRequest(
    agent_profile="developer", provider="mock_cli", session_name="cao-crew", working_directory="/work/x",
    caller_id="0badf00d", allowed_tools=["fs_read"], model="m1", yolo=True, env={"A": "1"},
)
BARE_REQUEST = CreateTerminalRequest(agent_profile="developer", working_directory="/work/x")
WORKTREE_REQUEST = CreateTerminalRequest(agent_profile="developer", working_directory="/work/x",
                                         use_worktree=True, worktree_changes=True)
WORKTREE = {"worktree_branch": "cao/developer-12345678", "worktree_path": "/work/x/.cao/worktrees/12345678"}
WORKTREE_TERMINAL = attrs.evolve(BARE_TERMINAL, **WORKTREE)
WORKTREE_RESULT = attrs.evolve(RESULT, **WORKTREE)
TOOL = McpToolSpec(name="review", description="Reviews a diff", factory=lambda kernel, caller: print)


class Color(enum.Enum):
    RED = "red"


# What a plugin route or MCP tool may answer: YAML values, enums, sets, records nested anywhere.
PLUGIN_VALUE = {
    "color": Color.RED, "status": TerminalStatus.IDLE, "when": datetime.datetime(2026, 1, 2, 3, 4, 5),
    "at": datetime.time(3, 4), "set": frozenset(["a"]), "tuple": (1, 2.5, None, True),
    "path": pathlib.PurePosixPath("/a/b"), 7: "int key", None: "none key", "records": [FRESH_MESSAGE, REPORT],
}

WRITTEN: dict[str, Callable[[], Any]] = {
    "terminal": lambda: wire.terminal_json(TERMINAL),
    "terminal_with_report": lambda: wire.terminal_json(TERMINAL, REPORT),
    "terminal_bare": lambda: wire.terminal_json(BARE_TERMINAL),
    "session": lambda: wire.session_json(SESSION, [TERMINAL]),
    "session_empty": lambda: wire.session_json(SessionInfo(name="cao-empty")),
    "report": lambda: wire.report_json("0badf00d", REPORT),
    "report_unset": lambda: wire.report_json("0badf00d", StatusReport(status="unknown")),
    "message": lambda: wire.message_json(MESSAGE),
    "message_fresh": lambda: wire.message_json(FRESH_MESSAGE),
    "delegation": lambda: wire.delegation_json(RESULT),
    "profile": lambda: wire.profile_json(PROFILE),
    "profile_bare": lambda: wire.profile_json(AgentProfile(name="bare")),
    "plugin_value": lambda: to_json(PLUGIN_VALUE),
    "mcp_tools": lambda: to_json([TOOL]),
    "session_creation": lambda: _creation_body(REQUEST, True, session_name=REQUEST.session_name),
    "terminal_creation": lambda: _creation_body(REQUEST, False, caller_id=REQUEST.caller_id),
    "bare_creation": lambda: _creation_body(BARE_REQUEST, True, session_name=None),
    "worktree_creation": lambda: _creation_body(WORKTREE_REQUEST, True, session_name=None),
    "terminal_in_worktree": lambda: wire.terminal_json(WORKTREE_TERMINAL),
    "delegation_in_worktree": lambda: wire.delegation_json(WORKTREE_RESULT),
    "cli_summary": lambda: _render.terminal_summary(TERMINAL),
    "cli_terminal": lambda: _render.terminal_json(TERMINAL),
    "cli_message": lambda: _render.message_json(MESSAGE),
}

# What the server answered, its client sent and the commands printed for the records above before
# they converted through cattrs, as compact JSON.
EXPECTED = {
    # A worktree's fields appear only on what was started in one (everything else reads as before).
    'worktree_creation': (
        '{"agent_profile":"developer","working_directory":"/work/x","yolo":false,"use_worktree":true,'
        '"worktree_changes":true,"wait_ready":true}'
    ),
    'terminal_in_worktree': (
        '{"id":"12345678","name":"w","session_name":"cao-s","provider":"p","agent_profile":"a",'
        '"working_directory":null,"caller_id":null,"allowed_tools":null,"created_at":null,'
        '"status":"unknown","backend":"tmux","worktree_branch":"cao/developer-12345678",'
        '"worktree_path":"/work/x/.cao/worktrees/12345678","last_active":null,"tmux_session":"cao-s",'
        '"tmux_window":"w"}'
    ),
    'delegation_in_worktree': (
        '{"kind":"handoff","success":true,"message":"done","agent_profile":"reviewer","caller_id":"0badf00d",'
        '"terminal_id":"deadbeef","output":"LGTM","duration":12.25,"worktree_branch":"cao/developer-12345678",'
        '"worktree_path":"/work/x/.cao/worktrees/12345678"}'
    ),
    'terminal': (
        '{"id":"0badf00d","name":"developer-1a2b","session_name":"cao-crew","provider":"mock_cli",'
        '"agent_profile":"developer","working_directory":"/work/café","caller_id":"deadbeef",'
        '"allowed_tools":["fs_read","@cao-mcp-server"],"created_at":"2026-01-02T03:04:05.123456+00:00",'
        '"status":"idle","backend":"tmux","last_active":"2026-01-02T03:04:05.123456+00:00",'
        '"tmux_session":"cao-crew","tmux_window":"developer-1a2b"}'
    ),
    'terminal_with_report': (
        '{"id":"0badf00d","name":"developer-1a2b","session_name":"cao-crew","provider":"mock_cli",'
        '"agent_profile":"developer","working_directory":"/work/café","caller_id":"deadbeef",'
        '"allowed_tools":["fs_read","@cao-mcp-server"],"created_at":"2026-01-02T03:04:05.123456+00:00",'
        '"status":"completed","backend":"tmux","last_active":"2026-01-02T03:04:07.623456+00:00",'
        '"tmux_session":"cao-crew","tmux_window":"developer-1a2b"}'
    ),
    'terminal_bare': (
        '{"id":"12345678","name":"w","session_name":"cao-s","provider":"p","agent_profile":"a",'
        '"working_directory":null,"caller_id":null,"allowed_tools":null,"created_at":null,'
        '"status":"unknown","backend":"tmux","last_active":null,"tmux_session":"cao-s",'
        '"tmux_window":"w"}'
    ),
    'session': (
        '{"id":"cao-crew","name":"cao-crew","status":"active","working_directory":"/work/café",'
        '"agent_profile":"developer"}'
    ),
    'session_empty': (
        '{"id":"cao-empty","name":"cao-empty","status":"detached","working_directory":null,'
        '"agent_profile":null}'
    ),
    'report': (
        '{"terminal_id":"0badf00d","status":"completed","evidence":"mock_cli: done",'
        '"since":"2026-01-02T03:04:07.623456+00:00"}'
    ),
    'report_unset': (
        '{"terminal_id":"0badf00d","status":"unknown","evidence":"","since":null}'
    ),
    'message': (
        '{"id":7,"sender_id":"0badf00d","receiver_id":"deadbeef","message":"please review ✓",'
        '"status":"failed","created_at":"2026-01-02T03:04:05.123456+00:00",'
        '"updated_at":"2026-01-02T03:04:06.123456+00:00","orchestration_type":"assign","attempts":2,'
        '"last_error":"busy","idempotency_key":"k-1","not_before":"2026-01-02T03:04:35.123456+00:00"}'
    ),
    'message_fresh': (
        '{"id":8,"sender_id":"user","receiver_id":"deadbeef","message":"hi","status":"pending",'
        '"created_at":"2026-01-02T03:04:05.123456+00:00","updated_at":null,'
        '"orchestration_type":"send_message","attempts":0,"last_error":null,"idempotency_key":null,'
        '"not_before":null}'
    ),
    'delegation': (
        '{"kind":"handoff","success":true,"message":"done","agent_profile":"reviewer",'
        '"caller_id":"0badf00d","terminal_id":"deadbeef","output":"LGTM","duration":12.25}'
    ),
    'profile': (
        '{"name":"developer","description":"Writes code","provider":"claude_code",'
        '"system_prompt":"You write code.","allowed_tools":["fs_read"],'
        '"mcp_servers":{"cao-mcp-server":{"command":"cao-mcp-server","args":["--x"],"env":{}}},'
        '"capabilities":[],"tags":["dev"],"extra":{"since":"2026-01-02","2":"two","True":["yes",2.5]},'
        '"source":"built-in","path":"/p/developer.md"}'
    ),
    'profile_bare': (
        '{"name":"bare","description":"","system_prompt":"","mcp_servers":{},"capabilities":[],'
        '"tags":[],"extra":{},"source":""}'
    ),
    'plugin_value': (
        '{"color":"red","status":"idle","when":"2026-01-02T03:04:05","at":"03:04:00","set":["a"],'
        '"tuple":[1,2.5,null,true],"path":"/a/b","7":"int key","None":"none key","records":[{"id":8,'
        '"sender_id":"user","receiver_id":"deadbeef","message":"hi","status":"pending",'
        '"created_at":"2026-01-02T03:04:05.123456+00:00","updated_at":null,'
        '"orchestration_type":"send_message","attempts":0,"last_error":null,"idempotency_key":null,'
        '"not_before":null},{"status":"completed","evidence":"mock_cli: done",'
        '"since":"2026-01-02T03:04:07.623456+00:00"}]}'
    ),
    'mcp_tools': '[{"name":"review","description":"Reviews a diff"}]',
    # The client's creation bodies (the route parameters that come from the request).
    'session_creation': (
        '{"agent_profile":"developer","provider":"mock_cli","working_directory":"/work/x",'
        '"allowed_tools":["fs_read"],"model":"m1","yolo":true,"env_vars":{"A":"1"},"wait_ready":true,'
        '"session_name":"cao-crew"}'
    ),
    'terminal_creation': (
        '{"agent_profile":"developer","provider":"mock_cli","working_directory":"/work/x",'
        '"allowed_tools":["fs_read"],"model":"m1","yolo":true,"env_vars":{"A":"1"},"wait_ready":false,'
        '"caller_id":"0badf00d"}'
    ),
    'bare_creation': (
        '{"agent_profile":"developer","working_directory":"/work/x","yolo":false,"wait_ready":true}'
    ),
    # What the ``--json`` options of ``cao session`` and ``cao terminal`` print.
    'cli_summary': '{"id":"0badf00d","agent_profile":"developer","provider":"mock_cli","status":"idle"}',
    'cli_terminal': (
        '{"id":"0badf00d","name":"developer-1a2b","session_name":"cao-crew","provider":"mock_cli",'
        '"agent_profile":"developer","status":"idle","working_directory":"/work/café",'
        '"caller_id":"deadbeef","allowed_tools":["fs_read","@cao-mcp-server"],'
        '"created_at":"2026-01-02T03:04:05.123456+00:00"}'
    ),
    'cli_message': (
        '{"id":7,"sender_id":"0badf00d","receiver_id":"deadbeef","message":"please review ✓",'
        '"status":"failed","created_at":"2026-01-02T03:04:05.123456+00:00","orchestration_type":"assign",'
        '"attempts":2,"last_error":"busy"}'
    ),
}


@pytest.mark.parametrize("name", EXPECTED)
def test_the_json_is_what_the_api_always_wrote(name: str):
    assert json.dumps(WRITTEN[name](), ensure_ascii=False, separators=(",", ":")) == EXPECTED[name]


@pytest.mark.parametrize(("name", "read", "record"), [
    ("terminal", wire.terminal_from_json, TERMINAL),
    ("terminal_bare", wire.terminal_from_json, BARE_TERMINAL),
    ("session", wire.session_from_json, SESSION),
    ("report", wire.report_from_json, REPORT),
    ("message", wire.message_from_json, MESSAGE),
    ("message_fresh", wire.message_from_json, FRESH_MESSAGE),
    ("delegation", wire.delegation_from_json, RESULT),
    ("terminal_in_worktree", wire.terminal_from_json, WORKTREE_TERMINAL),
    ("delegation_in_worktree", wire.delegation_from_json, WORKTREE_RESULT),
])
def test_the_client_reads_those_answers_back(name: str, read: Callable[[Any], Any], record: Any):
    assert read(json.loads(EXPECTED[name])) == record


# Time fields: the wire keeps them to the microsecond.
TIMES = {
    Terminal: ("created_at",), StatusReport: ("since",), Message: ("created_at", "updated_at", "not_before"),
}
# OutputEvent carries bytes, which JSON has no type for; it never crosses the wire.
ROUND_TRIPPED = sorted((c for c in cs.DATA_RECORDS if c is not OutputEvent), key=lambda c: c.__name__)


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-6)


@pytest.mark.parametrize("cls", ROUND_TRIPPED, ids=lambda cls: cls.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_record_comes_back_from_its_json(cls: type, data: st.DataObject):
    record = data.draw(cs.DATA_RECORDS[cls])
    back = from_json(json.loads(json.dumps(to_json(record))), cls)
    times = TIMES.get(cls, ())
    for name in times:
        assert _close(getattr(back, name), getattr(record, name)), name
    assert attrs.evolve(back, **{name: getattr(record, name) for name in times}) == record


@settings(max_examples=25, deadline=None)
@given(cs.terminals, st.none() | cs.status_reports)
def test_terminals_with_their_status_come_back_from_the_api(
    terminal: Terminal, report: StatusReport | None,
):
    back = wire.terminal_from_json(json.loads(json.dumps(wire.terminal_json(terminal, report))))
    assert _close(back.created_at, terminal.created_at)
    status = report.status if report is not None else terminal.status
    assert back == attrs.evolve(terminal, created_at=back.created_at, status=status)


def test_null_means_the_default_only_where_a_field_cannot_hold_none():
    data = {"id": 1, "sender_id": "s", "receiver_id": "r", "message": "m", "status": "pending",
            "created_at": T, "attempts": None, "last_error": None, "orchestration_type": None}
    read = from_json(data, Message)
    assert (read.attempts, read.last_error, read.orchestration_type) == (0, None, "send_message")


IMPORT_EVERY_MODULE = """
import importlib, pkgutil, sys, cao_server
for info in pkgutil.walk_packages(cao_server.__path__, "cao_server."):
    importlib.import_module(info.name)
print("cattrs" in sys.modules)
"""


def test_nothing_imports_cattrs_before_the_first_conversion():
    imported = subprocess.check_output([sys.executable, "-c", IMPORT_EVERY_MODULE], text=True, timeout=60)
    assert imported == "False\n"
