"""Native signals end to end: a real agent program in real tmux runs the kernel's signal command, the
kernel maps it through its provider and prefers it over the screen; and the channel itself (socket
names, leftovers, a second kernel, long homes, garbage)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    LaunchPlan,
    ProviderSpec,
    StatusReport,
    TerminalStatus,
    hookimpl,
)
from cao_kernel import signal_send
from cao_kernel.errors import Timeout
from cao_kernel.signal_channel import SignalChannel

# An agent whose screen never says it finished: after each answer a "working" row stays drawn (the
# spinner remnant a real CLI can leave), so only its own signal can tell the kernel the turn ended.
AGENT = """\
import json, os, subprocess, sys, time
command = json.loads(os.environ.get("CAO_SIGNAL_COMMAND") or "null")
def signal(event, payload=None):
    if command:
        subprocess.run(command + [event] + ([json.dumps(payload)] if payload is not None else []))
print("ready", flush=True)
sys.stdout.write("> ")
sys.stdout.flush()
n = 0
for line in sys.stdin:
    text = line.strip()
    if text in ("boom", "junk"):
        signal(text)
        continue
    signal("start")
    print("working", flush=True)
    time.sleep(0.3)
    n += 1
    print(f"ANSWER {n}: {text}", flush=True)
    print("working", flush=True)
    signal("done", {"n": n, "transcript": ["dropped"], "last_assistant_message": f"said {n}: {text}"})
"""


def detect(screen: str) -> StatusReport:
    rows = [row for row in screen.splitlines() if row.strip()]
    last = rows[-1] if rows else ""
    if last.startswith("working"):
        return StatusReport(status="processing", evidence="working row")
    if last.startswith(">"):
        return StatusReport(status="idle", evidence="prompt")
    return StatusReport(status="unknown", evidence="starting")


def extract(text: str) -> str:
    answers = [row for row in text.splitlines() if row.startswith("ANSWER")]
    if not answers:
        raise ValueError("no answer")
    return answers[-1]


def mapping(event: str, payload) -> StatusReport | None:  # noqa: ANN001
    if event == "start":
        return StatusReport(status="processing")
    if event == "done":
        assert "transcript" not in payload  # lists never reach the provider
        return StatusReport(status="completed", evidence=f"turn {payload['n']}")
    if event == "boom":
        raise RuntimeError("a provider bug")
    if event == "junk":
        return "completed"  # not a StatusReport
    return None


def carried(event: str, payload) -> str | None:  # noqa: ANN001
    return payload.get("last_assistant_message") if event == "done" else None


class SignallingProvider:
    def __init__(self, *, answers: bool = False) -> None:
        self.launched: list[dict[str, str]] = []
        self.answers = answers

    @hookimpl
    def cao_register_providers(self):
        def launch(ctx):
            self.launched.append(dict(ctx.env))
            return LaunchPlan(argv=[sys.executable, "-u", "-c", AGENT])

        return [ProviderSpec(name="signalling", binary="python", launch=launch, detect_status=detect,
                             extract_last_message=extract, native_signal=mapping,
                             native_answer=carried if self.answers else None)]


def _kernel(make_kernel, *, answers: bool = False, **settings):
    kernel = make_kernel(**settings)
    provider = SignallingProvider(answers=answers)
    kernel.register_plugin(provider, name="signalling")
    kernel.add_profile(AgentProfile(name="signaller", provider="signalling"))
    return kernel, provider


pytestmark = pytest.mark.tmux


async def test_an_answer_the_signal_carries_is_returned_at_once_without_the_screen(make_kernel, workdir):
    kernel, _ = _kernel(make_kernel, answers=True)
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="signaller", working_directory=workdir))
        for n, text in enumerate(("one", "two"), start=1):
            await kernel.send_input(term.id, text)
            await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
            started = time.monotonic()
            # The screen still reads busy (its spinner row stays), yet nothing waits for it to catch up.
            assert await kernel.get_output(term.id, "last") == f"said {n}: {text}"
            assert time.monotonic() - started < 0.5
        # A new input: the carried answer belonged to the turn before; until this turn ends, none.
        await kernel.send_input(term.id, "three")
        assert (await kernel.get_status(term.id)).status == TerminalStatus.PROCESSING
        await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert await kernel.get_output(term.id, "last") == "said 3: three"


async def test_the_agents_own_signal_decides_over_a_spinner_left_on_screen(make_kernel, workdir):
    kernel, provider = _kernel(make_kernel)
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="signaller", working_directory=workdir))
        [env] = provider.launched
        command = json.loads(env[signal_send.COMMAND_ENV])
        assert env[signal_send.SOCKET_ENV] == str(kernel.home.runtime / "signal.sock")
        assert command[-2:] == ["--terminal", term.id] and command[:3] == [sys.executable, "-I", "-S"]

        for n, text in enumerate(("one", "two"), start=1):
            # The second input follows the first answer at once: the screen still shows the first.
            await kernel.send_input(term.id, text)
            report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
            assert report.evidence == f"native: done (turn {n})"
            screen = await kernel.get_output(term.id, "full")
            assert detect(screen).status == TerminalStatus.PROCESSING  # the screen alone says busy
            await asyncio.sleep(0.3)
            assert (await kernel.get_status(term.id)).status == TerminalStatus.COMPLETED
            # The screen never catches up here: the answer read waits its bounded while, then reads.
            assert await kernel.get_output(term.id, "last") == f"ANSWER {n}: {text}"

        # A provider mapping that raises or answers nonsense changes nothing and breaks nothing.
        await kernel.send_input(term.id, "boom")
        await kernel.send_input(term.id, "junk")
        await asyncio.sleep(0.5)
        await kernel.send_input(term.id, "three")
        report = await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert report.evidence == "native: done (turn 3)"


async def test_with_the_channel_off_the_screen_decides(make_kernel, workdir):
    kernel, provider = _kernel(make_kernel, CAO_NATIVE_SIGNALS="0")
    async with kernel:
        term = await kernel.create_session(CreateTerminalRequest(
            agent_profile="signaller", working_directory=workdir))
        assert signal_send.COMMAND_ENV not in provider.launched[0]
        assert not (kernel.home.runtime / "signal.sock").exists()
        await kernel.send_input(term.id, "one")
        with pytest.raises(Timeout):
            await kernel.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=2)


async def test_a_terminal_re_adopted_by_the_next_kernel_still_reaches_it(make_kernel, workdir):
    first, _ = _kernel(make_kernel)
    async with first:
        term = await first.create_session(CreateTerminalRequest(
            agent_profile="signaller", working_directory=workdir))
    assert not (first.home.runtime / "signal.sock").exists()  # closed with its kernel
    second, _ = _kernel(make_kernel)
    async with second:
        assert [t.id for t in await second.list_terminals(term.session_name)] == [term.id]
        await second.send_input(term.id, "after the restart")
        report = await second.wait_for_status(term.id, {TerminalStatus.COMPLETED}, timeout=10)
        assert report.evidence == "native: done (turn 1)"


# -- the channel --------------------------------------------------------------------------------------


class Inbox:
    def __init__(self) -> None:
        self.signals: list = []
        self.arrived = threading.Event()

    def __call__(self, signal) -> None:  # noqa: ANN001
        self.signals.append(signal)
        self.arrived.set()

    def wait(self, count: int, timeout: float = 5.0) -> list:
        deadline = time.monotonic() + timeout
        while len(self.signals) < count and time.monotonic() < deadline:
            self.arrived.wait(0.05)
            self.arrived.clear()
        assert len(self.signals) >= count, self.signals
        return self.signals


def test_garbage_never_stops_the_reader_and_a_good_signal_still_arrives(tmp_path):
    inbox = Inbox()
    channel = SignalChannel.open(tmp_path, inbox)
    try:
        sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        for junk in (b"", b"\x00\xff", b"{}", b"[1]", b'{"v": 1, "terminal": "x", "event": "Stop"}',
                     b'{"v": 2, "terminal": "0123abcd", "event": "Stop"}', b"{" * 50_000):
            sender.sendto(junk, str(channel.path))
        sender.close()
        assert signal_send.send(str(channel.path), signal_send.encode("0123abcd", "Stop", {"a": [1], "b": 2}))
        [signal] = inbox.wait(1)
        assert (signal.terminal_id, signal.event, dict(signal.payload)) == ("0123abcd", "Stop", {"b": 2})
        assert signal.received >= signal.sent
    finally:
        channel.close()
    assert not channel.path.exists()


def test_a_leftover_socket_is_replaced_and_a_live_one_is_left_to_its_kernel(tmp_path):
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dead.bind(str(tmp_path / "signal.sock"))
    dead.close()  # a kernel that died without cleaning up
    first, second = Inbox(), Inbox()
    one = SignalChannel.open(tmp_path, first)
    two = SignalChannel.open(tmp_path, second)
    try:
        assert one.path == tmp_path / "signal.sock"
        assert two.path == tmp_path / f"signal-{os.getpid()}.sock"
        assert stat.S_IMODE(os.stat(one.path).st_mode) == 0o600
        signal_send.send(str(one.path), signal_send.encode("0123abcd", "one"))
        signal_send.send(str(two.path), signal_send.encode("0123abcd", "two"))
        assert [s.event for s in first.wait(1)] == ["one"]
        assert [s.event for s in second.wait(1)] == ["two"]
    finally:
        one.close()
        two.close()
    assert list(tmp_path.iterdir()) == []


def test_a_home_too_long_for_a_socket_address_gets_a_private_folder(tmp_path):
    runtime = tmp_path / ("long-home-" * 12) / "runtime"
    runtime.mkdir(parents=True)
    inbox = Inbox()
    channel = SignalChannel.open(runtime, inbox)
    try:
        assert len(str(channel.path)) <= 100
        folder = channel.path.parent
        assert folder.parent == Path(__import__("tempfile").gettempdir())
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700 and os.lstat(folder).st_uid == os.getuid()
        assert signal_send.send(str(channel.path), signal_send.encode("0123abcd", "Stop"))
        inbox.wait(1)
    finally:
        channel.close()
    # The same home finds the same folder again; a folder someone else could enter is refused.
    again = SignalChannel.open(runtime, Inbox())
    again.close()
    assert again.path == channel.path
    os.chmod(channel.path.parent, 0o755)
    try:
        with pytest.raises(OSError, match="not a private folder"):
            SignalChannel.open(runtime, Inbox())
    finally:
        channel.path.parent.rmdir()
