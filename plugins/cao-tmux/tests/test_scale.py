"""Speed and cost: creation latency, 50 terminals at once, no CPU while idle."""

from __future__ import annotations

import concurrent.futures
import os
import statistics
import subprocess
import time

import pytest

pytestmark = pytest.mark.tmux

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def test_create_to_first_output_is_fast(backend, launch, recorder):
    backend.create_terminal(launch(["cat"], session_name="cao-warm"))  # the server is already up
    delays = []
    for _ in range(5):
        spec = launch(["sh", "-c", "echo agent-up; exec cat"], session_name="cao-fast")
        events = recorder()
        started = time.monotonic()
        backend.create_terminal(spec)
        backend.watch(spec.terminal_id, events)
        delays.append(events.wait_output(b"agent-up") - started)
    median = statistics.median(delays)
    print(f"\ncreate -> first output: median {median * 1000:.1f} ms, max {max(delays) * 1000:.1f} ms")
    assert median < 0.3


def test_fifty_terminals_created_concurrently(backend, launch, recorder):
    specs = [launch(["cat"], session_name=f"cao-many-{i % 3}") for i in range(50)]
    recorders = {spec.terminal_id: recorder() for spec in specs}

    def create(spec):
        backend.create_terminal(spec)
        backend.watch(spec.terminal_id, recorders[spec.terminal_id])

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        list(pool.map(create, specs))
    elapsed = time.monotonic() - started
    print(f"\n50 terminals created and watched in {elapsed:.2f} s")
    assert elapsed < 10.0

    listed = backend.list_terminals()
    assert {t.terminal_id for t in listed} == set(recorders)
    assert [t for t in listed if not t.alive] == []
    assert {s.name for s in backend.list_sessions()} == {"cao-many-0", "cao-many-1", "cao-many-2"}
    # Every terminal got its own pipe: input to each shows up on its own stream only.
    for spec in specs[:10]:
        backend.send_text(spec.terminal_id, f"to-{spec.terminal_id}", enter_count=1)
    for spec in specs[:10]:
        recorders[spec.terminal_id].wait_output(f"to-{spec.terminal_id}\r\nto-{spec.terminal_id}".encode())
    assert not any(b"to-" in recorders[s.terminal_id].output() for s in specs[10:])


def _cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime, all threads
    return total / CLOCK_TICKS


def test_idle_terminals_cost_no_cpu(backend, launch, recorder, private_tmux):
    for i in range(20):
        spec = launch(["cat"], session_name=f"cao-idle-{i % 2}")
        backend.create_terminal(spec)
        backend.watch(spec.terminal_id, recorder())
    server = private_tmux.server_pid()
    helpers = subprocess.run(
        ["pgrep", "-P", str(server)], capture_output=True, text=True, check=True
    ).stdout.split()
    watched = [os.getpid(), server, *map(int, helpers)]  # this process, tmux, the agents and pipe readers
    time.sleep(0.3)  # let start-up work finish
    before = _cpu_seconds(watched)
    time.sleep(2.0)
    used = _cpu_seconds(watched) - before
    print(f"\nCPU used by backend + tmux + 40 helper processes over 2 s idle: {used:.3f} s")
    assert used <= 0.02  # at most two clock ticks: ~0 %
