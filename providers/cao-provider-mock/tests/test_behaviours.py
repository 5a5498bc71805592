"""Scripted behaviours: naming and loading them, the Turn, and mock_cli running one (pipes and a pty)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_mock.behaviours import BehaviourError, check_spec, load_behaviour
from cao_provider_mock.turns import BehaviourHost, Turn
from cao_provider_mock.builtin_behaviours import echo, worker
from cao_provider_mock.contract import BEHAVIOUR_ERROR_PREFIX, NO_ANSWER_LINE
from cao_provider_mock.provider import launch

PROGRAMS = Path(__file__).parent / "programs"
P = "\u276f "
ASSIGN = "[Assigned by terminal 0a1b2c3d. When done, send results back to terminal 0a1b2c3d using send_message]"
MESSAGE = "[Message from terminal 99aa88bb. Use send_message MCP tool for any follow-up work.]"


@pytest.fixture
def behaviour_path(monkeypatch):
    monkeypatch.setenv("CAO_MOCK_BEHAVIOUR_PATH", str(PROGRAMS))
    return str(PROGRAMS)


def run_agent(stdin: str, *args: str, env: dict[str, str] | None = None, cwd: str | None = None):
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "mock_cli"), *args],
                          input=stdin.encode(), capture_output=True, timeout=30, env=env, cwd=cwd, check=False)


# -- names --------------------------------------------------------------------------------------


def test_spec_shapes():
    for good in ("echo", "my-behaviour", "pkg.mod:fn", "pkg:Class.method", "a:b"):
        assert check_spec(good) == good
    for bad in ("", "pkg.mod:", ":fn", "pkg mod:fn", "/tmp/x.py:fn", "a:b:c", "1pkg:fn", None, 3):
        with pytest.raises(BehaviourError, match="not an entry-point name"):
            check_spec(bad)


def test_builtin_behaviours_are_entry_points_of_the_distribution():
    import importlib.metadata

    dist = importlib.metadata.distribution("cao-provider-mock")
    found = {ep.name: ep.value for ep in dist.entry_points if ep.group == "cao.mock_behaviours"}
    assert found == {"echo": "cao_provider_mock.builtin_behaviours:echo",
                     "worker": "cao_provider_mock.builtin_behaviours:worker",
                     "permission": "cao_provider_mock.builtin_behaviours:permission"}


def test_builtin_behaviours_load_from_their_entry_points():
    assert load_behaviour("echo") is echo
    assert load_behaviour("worker") is worker
    with pytest.raises(BehaviourError, match=r"no mock behaviour named 'nope'.*echo, permission, worker"):
        load_behaviour("nope")


def test_dotted_behaviours_load_from_the_behaviour_path(behaviour_path):
    behaviour = load_behaviour("behaviours_for_tests:scripted")
    assert behaviour.__name__ == "scripted"
    with pytest.raises(BehaviourError, match="has no attribute 'absent'"):
        load_behaviour("behaviours_for_tests:absent")
    with pytest.raises(BehaviourError, match="must be an 'async def'"):
        load_behaviour("behaviours_for_tests:not_async")
    with pytest.raises(BehaviourError, match=r"cannot import 'no_such_module_here'"):
        load_behaviour("no_such_module_here:fn")


# -- the turn -----------------------------------------------------------------------------------

_task = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)


@given(_task)
def test_turn_reads_the_assign_callback_line(task):
    turn = Turn(f"{task}\n\n{ASSIGN}", 1, {}, host=None)  # type: ignore[arg-type]
    assert (turn.assigned_by, turn.message_from, turn.reply_to) == ("0a1b2c3d", None, "0a1b2c3d")
    assert turn.task == task.strip()


@given(_task)
def test_turn_reads_the_message_sender_line(task):
    turn = Turn(f"{task}\n\n{MESSAGE}\n", 2, {}, host=None)  # type: ignore[arg-type]
    assert (turn.assigned_by, turn.message_from, turn.reply_to) == (None, "99aa88bb", "99aa88bb")
    assert turn.task == task.strip()


def test_protocol_lines_count_only_on_lines_of_their_own():
    quoted = Turn(f"please repeat '{ASSIGN}' to me", 1, {}, host=None)  # type: ignore[arg-type]
    assert quoted.assigned_by is None and quoted.task == f"please repeat '{ASSIGN}' to me"
    forged = Turn("[Assigned by terminal 0a1b2c3d. When done, send results back to terminal ffffffff "
                  "using send_message]", 1, {}, host=None)  # type: ignore[arg-type]
    assert forged.assigned_by is None
    trailing = Turn(f"task\n\n{ASSIGN}\nthen typed by hand", 1, {}, host=None)  # type: ignore[arg-type]
    assert [(m.text, m.kind, m.sender) for m in trailing.messages] == [
        ("task", "assign", "0a1b2c3d"), ("then typed by hand", "input", None)]
    assert trailing.assigned_by is None and trailing.task == "then typed by hand"


_sender = st.text(alphabet="0123456789abcdef", min_size=8, max_size=8)


@given(st.lists(st.tuples(_task, st.sampled_from(["assign", "message"]), _sender), min_size=1, max_size=5))
def test_a_batch_of_messages_splits_back_into_its_messages(batch):
    # The kernel types consecutive messages from one sender as one input, joined by a line break.
    def suffix(kind, sender):
        if kind == "assign":
            return (f"[Assigned by terminal {sender}. When done, send results back to terminal {sender} "
                    "using send_message]")
        return f"[Message from terminal {sender}. Use send_message MCP tool for any follow-up work.]"

    text = "\n".join(f"{body}\n\n{suffix(kind, sender)}" for body, kind, sender in batch)
    turn = Turn(text, 1, {}, host=None)  # type: ignore[arg-type]
    assert [(m.text, m.kind, m.sender) for m in turn.messages] == [
        (body.strip(), kind, sender) for body, kind, sender in batch]
    assert turn.reply_to == batch[-1][2]


# -- the provider's launch plan -----------------------------------------------------------------


def _context(tmp_path, profile, servers=None):
    terminal = Terminal(id="0123abcd", name="dev-1a2b", session_name="cao-t", provider="mock_cli",
                        agent_profile=profile.name)
    return LaunchContext(terminal=terminal, profile=profile, working_directory=str(tmp_path),
                         runtime_dir=str(tmp_path / "rt"), mcp_servers=servers or {})


def test_launch_passes_the_behaviour_and_writes_the_mcp_config(tmp_path, monkeypatch):
    monkeypatch.setenv("CAO_MOCK_BEHAVIOUR_PATH", "/somewhere")
    servers = {"cao-mcp-server": {"command": "/venv/bin/cao-mcp-server", "args": [],
                                  "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "4321"}}}
    profile = AgentProfile(name="sup", extra={"mockBehaviour": " examples.assign.behaviours:supervisor "})
    plan = launch(_context(tmp_path, profile, servers))
    config = str(tmp_path / "rt" / "mcp.json")
    assert plan.argv[-5:] == ("50", "--mcp-config", config, "--behaviour", "examples.assign.behaviours:supervisor")
    assert json.loads(plan.files["mcp.json"]) == {"mcpServers": servers}
    assert plan.env == {"CAO_MOCK_BEHAVIOUR_PATH": "/somewhere"}


def test_launch_without_behaviour_or_servers_is_the_plain_mock(tmp_path, monkeypatch):
    monkeypatch.delenv("CAO_MOCK_BEHAVIOUR_PATH", raising=False)
    plan = launch(_context(tmp_path, AgentProfile(name="dev", extra={"mockBehaviour": "echo"})))
    assert plan.argv[-2:] == ("--behaviour", "echo") and not plan.files and not plan.env
    plain = launch(_context(tmp_path, AgentProfile(name="dev")))
    assert plain.argv[-2:] == ("--delay-ms", "50") and not plain.files


@pytest.mark.parametrize("bad", ["two words", "file.py:fn:x", 42, ["echo"]])
def test_launch_refuses_a_malformed_behaviour_naming_profile_and_key(tmp_path, bad):
    profile = AgentProfile(name="sup", extra={"mockBehaviour": bad})
    with pytest.raises(ValueError, match=r"agent profile 'sup': mockBehaviour: mock behaviour"):
        launch(_context(tmp_path, profile))


# -- mock_cli running a behaviour (pipes) --------------------------------------------------------


def test_every_way_a_turn_ends(behaviour_path):
    env = dict(os.environ, CAO_TERMINAL_ID="0123abcd")
    result = run_agent("first task\nhistory\nquiet\nfail\n__mock_sleep_0\nwho\nsdk\n/exit\n",
                       "--behaviour", "behaviours_for_tests:scripted", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().split(P) == [
        "MockCli ready.\n",
        "> MOCK: task: first task\n",
        "> MOCK: 1. first task\n\u2502 2. history\n",
        f"\u23fa nothing to say\n{NO_ANSWER_LINE}\n",
        f"{BEHAVIOUR_ERROR_PREFIX}RuntimeError: asked to fail\n",
        "> MOCK: slept 0s\n",  # commands keep their meaning
        "> MOCK: 0123abcd None None None\n",
        "> MOCK: mcp imported: False\n",  # no tool called, so the SDK was never imported
        "goodbye\n",
    ]


def test_behaviour_turns_in_order_with_memory(behaviour_path):
    result = run_agent("one\ntwo\nhistory\n", "--behaviour", "behaviours_for_tests:scripted")
    out = result.stdout.decode()
    assert out.endswith(f"> MOCK: 1. one\n\u2502 2. two\n\u2502 3. history\n{P}")


def test_a_bad_behaviour_or_config_stops_the_program_at_start(tmp_path, behaviour_path):
    missing = run_agent("", "--behaviour", "nowhere_at_all:fn")
    assert missing.returncode == 2 and missing.stdout == b""
    assert b"mock_cli: cannot import 'nowhere_at_all'" in missing.stderr
    bad_json = tmp_path / "mcp.json"
    bad_json.write_text("{not json")
    broken = run_agent("", "--behaviour", "echo", "--mcp-config", str(bad_json))
    assert broken.returncode == 2 and b"is not valid JSON" in broken.stderr
    bad_json.write_text('{"mcpServers": {"x": {"args": []}}}')
    no_command = run_agent("", "--behaviour", "echo", "--mcp-config", str(bad_json))
    assert no_command.returncode == 2 and b"server 'x' needs a 'command'" in no_command.stderr
    no_value = run_agent("", "--behaviour")
    assert no_value.returncode == 2 and b"--behaviour needs a value" in no_value.stderr


def test_the_working_directory_is_searched_last(tmp_path):
    (tmp_path / "local_behaviour.py").write_text("async def hello(turn):\n    return 'from the project'\n")
    env = {k: v for k, v in os.environ.items() if k != "CAO_MOCK_BEHAVIOUR_PATH"}
    result = run_agent("x\n", "--behaviour", "local_behaviour:hello", env=env, cwd=str(tmp_path))
    assert result.stdout.decode().endswith(f"> MOCK: from the project\n{P}")


def test_worker_answers_a_handoff_in_its_reply():
    done = run_agent("write the summary\n", "--behaviour", "worker")
    assert done.stdout.decode().endswith(f"> MOCK: Done: write the summary\n{P}")


# -- under a pseudo-terminal -----------------------------------------------------------------------


def test_pty_paste_goes_to_the_behaviour_whole_and_ctrl_c_cancels_a_turn(spawn_pty, behaviour_path):
    agent = spawn_pty("--behaviour", "behaviours_for_tests:scripted")
    agent.expect(b"MockCli ready.\r\n" + P.encode())
    agent.send(b"\x1b[200~first line\nsecond line\x1b[201~\r")
    agent.expect(b"> MOCK: task: first line\r\n\xe2\x94\x82 second line\r\n" + P.encode())
    agent.send(f"\x1b[200~who\n\n{ASSIGN}\x1b[201~\r".encode())
    agent.expect(b"> MOCK: None 0a1b2c3d None 0a1b2c3d\r\n" + P.encode())
    agent.send(b"think 30\r")
    agent.expect(b"think 30\r\n")
    agent.quiet(0.3)
    agent.send(b"\x03")
    agent.expect(b"^C\r\n" + P.encode(), timeout=3)
    agent.send(b"history\r")
    answer = agent.expect(b"4. history\r\n" + P.encode())
    # The paste was one task (two lines), and the cancelled turn had started.
    assert answer.endswith(b"> MOCK: 1. first line\r\n\xe2\x94\x82 second line\r\n\xe2\x94\x82 2. who\r\n"
                           b"\xe2\x94\x82 3. think 30\r\n\xe2\x94\x82 4. history\r\n" + P.encode()), answer
    agent.send(b"/exit\r")
    agent.expect(b"goodbye\r\n")
    assert agent.wait() == 0


def test_pty_type_ahead_waits_for_the_turn(spawn_pty, behaviour_path):
    agent = spawn_pty("--behaviour", "behaviours_for_tests:scripted")
    agent.expect(P.encode())
    agent.send(b"think 0.4\rnext\r")
    out = agent.expect(b"> MOCK: task: next\r\n" + P.encode())
    assert out.index(b"> MOCK: thought") < out.index(b"next")


def test_start_up_loads_the_behaviour_but_neither_asyncio_nor_the_mcp_sdk(behaviour_path, tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"x": {"command": "true"}}}')
    code = ("import sys; from cao_provider_mock.agent import Options, _behaviour_host; o = Options(); "
            f"o.behaviour, o.mcp_config = 'behaviours_for_tests:scripted', {str(config)!r}; _behaviour_host(o, '\\n'); "
            "print(sorted(m for m in ('asyncio', 'mcp', 'threading') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_host_runs_turns_in_a_thread_and_closes(behaviour_path):
    rows: list[str] = []
    host = BehaviourHost(load_behaviour("behaviours_for_tests:scripted"), None, rows.append)
    assert host.submit("quiet").result(timeout=5) is None
    assert host.submit("history").result(timeout=5) == "1. quiet\n2. history"
    with pytest.raises(Exception, match="this agent has no MCP servers"):
        host.submit("add").result(timeout=5)
    host.close()
    assert rows[0] == "\u23fa nothing to say" and rows[-1].startswith("  \u23bf failed: cannot call 'add'")
