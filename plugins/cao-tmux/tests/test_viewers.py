"""Viewers: a tmux client attached through ``attach_argv`` shows its terminal and takes its keys, moves no
other client, never shows up as a cao session or terminal, and leaves nothing behind: not its session,
not its size on the agent's window, not its process."""

from __future__ import annotations

import subprocess

import pytest
from cao_hookspecs.errors import InvalidInput
from cao_tmux import viewer
from cao_tmux.errors import TerminalNotFound

pytestmark = pytest.mark.tmux


def _clients(tmux):
    """{client tty: (session, window id, width x height)} of every client attached to the server."""
    out = tmux.run("list-clients", "-F", "#{client_name}\t#{session_name}\t#{window_id}\t#{client_width}x"
                   "#{client_height}", check=False).stdout
    return {name: tuple(rest) for name, *rest in (line.split("\t") for line in out.splitlines())}


def _sessions(tmux):
    out = tmux.run("list-sessions", "-F", "#{session_name}", check=False).stdout
    return out.split()


def _window(tmux, terminal_id):
    """(window id, size) of a terminal's window, as tmux reports them."""
    out = tmux.run("list-windows", "-a", "-F", "#{@cao_id} #{window_id} #{window_width}x#{window_height}").stdout
    for line in out.splitlines():
        tid, window, size = line.split()
        if tid == terminal_id:
            return window, size
    raise AssertionError(f"no window for terminal {terminal_id}")


def _viewers(tmux):
    return [name for name in _sessions(tmux) if name.startswith(viewer.PREFIX)]


@pytest.fixture
def two_agents(start):
    """Two terminals running ``cat`` in session cao-test, launched 100 x 30."""
    first, _ = start(["cat"])
    second, _ = start(["cat"])
    return first.terminal_id, second.terminal_id


@pytest.fixture
def attach(backend, pty_client, private_tmux, wait_until):
    """``attach(terminal_id, rows=24, cols=80) -> client``: run the viewer's command line under a PTY and
    wait until tmux shows it the terminal's window."""

    def attach_(terminal_id, rows=24, cols=80):
        window, _ = _window(private_tmux, terminal_id)
        before = set(_clients(private_tmux))
        client = pty_client(backend.attach_argv(terminal_id), rows, cols)
        wait_until(lambda: any(name not in before and state[1] == window
                               for name, state in _clients(private_tmux).items()),
                   what=f"a viewer client on window {window}")
        return client

    return attach_


def test_a_viewer_shows_its_terminal_and_moves_no_other_client(two_agents, attach, backend, private_tmux,
                                                              pty_client, wait_until):
    first, second = two_agents
    first_window, _ = _window(private_tmux, first)
    # A person attached to the cao session, looking at the first agent.
    person = pty_client(private_tmux.argv("attach-session", "-t", "=cao-test"), 30, 100)
    private_tmux.run("select-window", "-t", first_window)
    wait_until(lambda: [s[1] for s in _clients(private_tmux).values()] == [first_window], what="the person")
    (person_tty,) = _clients(private_tmux)
    person_size = _window(private_tmux, first)[1]

    client = attach(second)

    second_window, size = _window(private_tmux, second)
    clients = _clients(private_tmux)
    assert clients[person_tty][:2] == ("cao-test", first_window), "the person's view must not move"
    (mine,) = [state for name, state in clients.items() if name != person_tty]
    assert mine[1] == second_window and mine[0].startswith(viewer.PREFIX + second)
    # The viewer shows the pane row for row (no status line): the window takes the viewer's size.
    assert size == "80x24"
    assert _window(private_tmux, first)[1] == person_size, "a window the viewer never showed keeps its size"
    client.type(b"typed in the viewer\r")
    wait_until(lambda: "typed in the viewer" in backend.capture(second), what="the keys to reach the agent")
    assert "typed in the viewer" not in backend.capture(first)
    person.close()


def test_viewer_sessions_are_no_cao_sessions_or_terminals(two_agents, attach, backend, make_backend,
                                                          private_tmux):
    first, second = two_agents
    attach(second)
    (name,) = _viewers(private_tmux)

    for looking in (backend, make_backend()):  # this backend, and one re-adopting after a restart
        assert [s.name for s in looking.list_sessions()] == ["cao-test"]
        terminals = looking.list_terminals()
        assert sorted(t.terminal_id for t in terminals) == sorted([first, second])
        assert {t.session_name for t in terminals} == {"cao-test"}
        assert looking.list_terminals(session_name=name) == []
        # tmux resolves a pane to whichever session of the group it likes best: the viewer's, just used.
        assert looking.info(second).session_name == "cao-test"
        assert len(looking.list_terminals(session_name="cao-test")) == 2


def test_leaving_puts_the_window_back_and_removes_the_viewer(two_agents, attach, backend, private_tmux,
                                                             wait_until, alive):
    _, second = two_agents
    client = attach(second)
    client.resize(40, 120)
    wait_until(lambda: _window(private_tmux, second)[1] == "120x40", what="the window to follow the viewer")

    client.close()

    wait_until(lambda: not _viewers(private_tmux), what="the viewer session to go")
    wait_until(lambda: _window(private_tmux, second)[1] == "100x30", what="the launch size back")
    assert not alive(client.proc.pid) and _clients(private_tmux) == {}
    assert backend.info(second).alive
    # tmux sizes the window to clients again (the launch size is no manual size of its own).
    assert private_tmux.run("show-options", "-w", "-v", "-t", _window(private_tmux, second)[0],
                            "window-size", check=False).stdout.strip() in ("", "latest")


def test_the_window_keeps_following_a_viewer_that_stays(two_agents, attach, private_tmux, wait_until):
    _, second = two_agents
    leaving = attach(second, 40, 120)
    staying = attach(second, 35, 90)
    wait_until(lambda: _window(private_tmux, second)[1] == "90x35", what="the latest viewer's size")

    leaving.close()

    wait_until(lambda: len(_viewers(private_tmux)) == 1, what="the leaving viewer's session to go")
    assert _window(private_tmux, second)[1] == "90x35"
    staying.close()
    wait_until(lambda: _window(private_tmux, second)[1] == "100x30", what="the launch size back")


def test_killing_a_terminal_ends_its_viewers_first(two_agents, attach, backend, private_tmux):
    first, second = two_agents
    client = attach(second, 40, 120)

    backend.kill_terminal(second)

    assert client.proc.wait(5) == 0
    assert not _viewers(private_tmux)
    # A viewer left on the grouped session would have moved to the other agent and resized it.
    assert _window(private_tmux, first)[1] == "100x30"
    assert [s.name for s in backend.list_sessions()] == ["cao-test"]


def test_killing_a_session_ends_its_viewers_and_its_windows(two_agents, attach, backend, private_tmux):
    first, second = two_agents
    clients = [attach(first), attach(second)]

    backend.kill_session("cao-test")

    assert [client.proc.wait(5) for client in clients] == [0, 0]
    assert _sessions(private_tmux) == []
    assert backend.list_terminals() == []


def test_a_viewer_whose_client_cannot_attach_leaves_nothing(two_agents, backend, private_tmux):
    _, second = two_agents
    # Without a terminal tmux refuses the attach, after the viewer's session was made.
    done = subprocess.run(backend.attach_argv(second), stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=10, check=False)
    assert done.returncode != 0
    assert _viewers(private_tmux) == []


def test_attach_argv_refuses_unknown_and_invalid_terminals(backend, two_agents):
    with pytest.raises(TerminalNotFound):
        backend.attach_argv("0badc0de")
    with pytest.raises(InvalidInput):
        backend.attach_argv("cao-test:1")


def test_viewer_names_belong_to_their_terminal():
    name = viewer.new_name("deadbeef")
    assert viewer.of_terminals([name, "cao-test", viewer.new_name("deadbee0")], ["deadbeef"]) == [name]
    assert viewer.of_terminals([name], []) == []
    assert not name.startswith("cao-")
