"""A viewer program under its PTY: what it draws is read, what is typed reaches it, a new size is told to
it, and ending it leaves no process and no descriptor, whatever it does with signals."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

import pytest
from cao_testkit.processes import open_ptys, pid_alive
from cao_testkit.waiting import wait_until
from cao_web.viewer import Viewer


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


@contextlib.asynccontextmanager
async def viewing(argv, rows=24, cols=80):
    """A viewer ended whatever the test makes of it."""
    viewer = Viewer.start(argv, rows, cols)
    try:
        yield viewer
    finally:
        await viewer.end(grace=0.5)


async def read_until(viewer, needle):
    seen = b""
    while needle not in seen:
        chunk = await viewer.read()
        assert chunk, f"the terminal closed before {needle!r}; it showed {seen!r}"
        seen += chunk
    return seen


def test_output_is_read_as_drawn_and_input_typed_until_the_end():
    async def main():
        script = 'stty size; echo "term=$TERM"; read line; echo "got:$line"'
        async with viewing(["sh", "-c", script]) as viewer:
            shown = await read_until(viewer, b"term=xterm-256color")
            assert b"24 80" in shown
            await viewer.write(b"hello\r")
            await read_until(viewer, b"got:hello")
            assert await viewer.wait() == 0
            while await viewer.read():
                pass  # the rest, then the end of the terminal
            assert await viewer.end() == 0
            assert viewer.master == -1

    held = open_ptys()
    run(main())
    assert open_ptys() == held


def test_a_new_size_is_told_to_the_program():
    code = ("import os, signal, time\n"
            "def told(*_):\n"
            "    os.write(1, b'size %d %d\\n' % tuple(os.get_terminal_size(0)))\n"
            "signal.signal(signal.SIGWINCH, told)\n"
            "os.write(1, b'ready\\n')\n"
            "time.sleep(30)\n")

    async def main():
        async with viewing([sys.executable, "-c", code]) as viewer:
            await read_until(viewer, b"ready")
            viewer.resize(40, 120)
            await read_until(viewer, b"size 120 40")
            await viewer.end()

    run(main())


def test_a_program_deaf_to_sigterm_ends_with_its_terminal():
    async def main():
        # A signal lost between a shell's fork and its child's exec looks like this to the viewer.
        async with viewing(["sh", "-c", "trap '' TERM; echo up; exec cat"]) as viewer:
            await read_until(viewer, b"up")
            started = time.monotonic()
            await viewer.end(grace=3.0)
            return time.monotonic() - started

    assert run(main()) < 2.0, "it took SIGKILL: closing the terminal did not end it"


def test_a_program_deaf_to_everything_is_killed_after_the_grace():
    async def main():
        async with viewing(["sh", "-c", "trap '' TERM HUP; echo up; exec sleep 60"]) as viewer:
            await read_until(viewer, b"up")
            return await viewer.end(grace=0.3), viewer.proc.pid

    status, pid = run(main())
    assert status == -9 and not pid_alive(pid)  # reaped


def test_what_the_program_left_in_its_group_is_ended_too():
    async def main():
        # Both deaf to SIGTERM; the program ends with its terminal, its child would not.
        child = 'trap "" TERM HUP; echo ready:$$; exec sleep 60'
        async with viewing(["sh", "-c", f"trap '' TERM; sh -c '{child}' & exec cat"]) as viewer:
            shown = await read_until(viewer, b"ready:")
            while b"\n" not in shown.split(b"ready:")[1]:
                shown += await viewer.read()
            child = int(shown.split(b"ready:")[1].split()[0])
            assert pid_alive(child)
            await viewer.end()
            return child

    child = run(main())
    wait_until(lambda: not pid_alive(child), timeout=2, what="the program's child to be killed")


def test_a_program_that_cannot_start_holds_nothing():
    async def main():
        with pytest.raises(OSError):
            Viewer.start(["/nonexistent/viewer"], 24, 80)

    held = open_ptys()
    run(main())
    assert open_ptys() == held
