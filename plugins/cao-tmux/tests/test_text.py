"""Parsers, validators and quoting: properties over arbitrary input (hypothesis), some against real tmux."""

from __future__ import annotations

import re
import subprocess
import time

import pytest
from cao_tmux import checks, listing, quoting, screen
from cao_tmux.server import parse_version
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

printable = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60)
MARKERS = ("\x1b[200~", "\x1b[201~")


@given(
    st.text(alphabet=st.sampled_from(["a", "\x1b", "[", "2", "0", "1", "~", "\n"]), max_size=80) | st.text()
)
def test_paste_payload_never_carries_a_paste_marker(text):
    payload = screen.paste_payload(text).decode("utf-8", "surrogatepass")
    assert not any(marker in payload for marker in MARKERS)
    if not any(marker in text for marker in MARKERS):
        assert payload == text


@given(st.lists(st.text(alphabet=st.sampled_from(["x", " ", "\t", "y"]), max_size=8), max_size=12))
def test_tidy_capture(rows):
    tidy = screen.tidy_capture("\n".join(rows))
    lines = tidy.split("\n")
    assert all(line == line.rstrip() for line in lines)
    assert tidy == "" or lines[-1] != ""
    assert screen.tidy_capture(tidy) == tidy
    assert [r.rstrip() for r in rows][: len(lines)] == lines or tidy == ""


@given(st.lists(st.text(alphabet="abc ", max_size=5), min_size=1, max_size=10), st.booleans(), st.booleans())
def test_dead_screen_restores_the_last_screen(rows, banner, extra_history):
    height = len(rows)
    # What tmux shows after the program ended: with the banner, the screen scrolled up one row; the
    # capture starts one row early (the scrolled-out row, or a history row we must drop).
    if banner:
        captured = rows + ["Pane is dead (status 1, Sun Jan  1 00:00:00 2026)"]
    else:
        captured = (["older history"] if extra_history else []) + rows
    text = "\n".join(captured) + "\n"
    assert screen.dead_screen(text, height).split("\n") == rows


@given(st.text(max_size=40))
def test_key_validation_only_lets_safe_names_through(text):
    try:
        key = checks.key(text)
    except ValueError as exc:
        assert repr(text) in str(exc)
        return
    assert key == text and 1 <= len(key) <= 22
    assert not re.search(r"\s|[\x00-\x1f\x7f]", key)
    assert key.isascii()


@pytest.mark.parametrize(
    "key", ["Enter", "Escape", "Up", "C-c", "M-Up", "C-S-Tab", "F12", "BSpace", "y", "1", ";", "-"]
)
def test_common_keys_are_accepted(key):
    assert checks.key(key) == key


@pytest.mark.parametrize("key", ["", "Enter Enter", "\x1b", "C-", "é", "a\n", "X" * 30])
def test_bad_keys_are_refused(key):
    with pytest.raises(ValueError, match="invalid key"):
        checks.key(key)


@given(st.dictionaries(printable, printable, max_size=5))
def test_metadata_json_round_trips_through_a_listing_row(meta):
    stored = checks.metadata(meta)
    assert "\t" not in stored and "\n" not in stored and stored.isascii()
    line = listing.fields(
        "abcd1234", "%3", "cao-x", "0", "", "", stored, "window", "123", "/some where/with\ttab"
    )
    [row] = listing.parse_panes(line)
    assert row.metadata == meta
    assert row.path == "/some where/with\ttab"
    assert row.exit is None and row.pid == 123


@given(st.text(max_size=200))
def test_listing_parsers_never_raise(text):
    listing.parse_panes(text)
    listing.parse_pipes(text)
    listing.metadata(text)
    listing.first_pane_id(text)


@given(st.one_of(st.none(), st.integers(min_value=-10, max_value=10**6), st.booleans(), st.text(max_size=3)))
def test_history_validation(value):
    try:
        result = checks.history(value)
    except ValueError:
        assert value is not None and (isinstance(value, bool | str) or value < -1)
        return
    assert result is None or result == -1 or result > 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [("tmux 3.3a", (3, 3)), ("tmux 3.7b", (3, 7)), ("tmux next-3.6", (3, 6)), ("tmux master", None)],
)
def test_parse_version(text, expected):
    assert parse_version(text) == expected


def test_exit_descriptions():
    assert listing.Exit(status=3, signal=None).describe() == "program exited with status 3"
    killed = listing.Exit.from_wait_status(9)
    assert (killed.signal, killed.code) == (9, 137)
    assert "SIGKILL" in killed.describe()
    assert listing.Exit.from_wait_status(7 << 8) == listing.Exit(status=7, signal=None)
    assert listing.Exit(status=None, signal=None).code is None


# -- against real tmux ------------------------------------------------------------------------------

tmux_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)


@pytest.mark.tmux
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=tmux_text | st.sampled_from(["x;", ";", "\\;", "a\\", "\\", "-v", "--", "#{pane_id}", "'\"$x"]))
def test_arguments_reach_tmux_unchanged(private_tmux, value):
    # One invocation, several commands: the value must stay one intact argument.
    from cao_tmux.server import TmuxServer

    server = TmuxServer(socket_path=private_tmux.socket_path, config_file=private_tmux.config_file)
    if private_tmux.server_pid() is None:
        server.run(["new-session", "-d", "-s", "s", "--", "sleep", "1000"])
    out = server.run(["set-option", "-g", "@probe", value], ["show-options", "-gv", "@probe"])
    assert out == value + "\n"


@pytest.mark.tmux
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=(tmux_text | st.sampled_from(["-x", "--", "-", "a\\b", "x;", "#{pane_id}"])).filter(
        lambda n: len(n) <= 200
    ),
    meta=st.dictionaries(printable, printable, max_size=3),
    value=tmux_text,
)
def test_window_names_metadata_and_env_survive_tmux(backend, launch, python, tmp_path, name, meta, value):
    out = tmp_path / "value.txt"
    out.unlink(missing_ok=True)
    # Written aside, then renamed: the test never reads a half-written file.
    code = "import os, sys; p = sys.argv[1]; open(p + '.tmp', 'w').write(os.environ['VALUE']); os.rename(p + '.tmp', p)"
    if not backend.list_sessions():
        backend.create_terminal(launch(["cat"], session_name="cao-keep"))  # the server outlives each example
    spec = launch([python, "-c", code, str(out)], window_name=name, metadata=meta, env={"VALUE": value})
    backend.create_terminal(spec)
    try:
        info = next(t for t in backend.list_terminals() if t.terminal_id == spec.terminal_id)
        assert dict(info.metadata) == meta
        assert info.window_name == name
        deadline = time.monotonic() + 5
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert out.read_text() == value
    finally:
        backend.kill_terminal(spec.terminal_id)


def test_pipe_command_copies_into_a_fifo_at_any_path(tmp_path):
    import os

    weird = tmp_path / "a 'b' \"c\" $d `e` ;f #g"
    weird.mkdir()
    fifo = weird / "x.out"
    os.mkfifo(fifo)
    # Its reader opens first, as the backend's does: a pipe never waits for one to come.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    # tmux would turn "##" back into "#" before handing the command to sh.
    command = quoting.pipe_command(str(fifo)).replace("##", "#")
    subprocess.run(["sh", "-c", command], input=b"pane output", check=True, timeout=10)
    received = [os.read(reader, 100)]
    os.close(reader)
    assert received == [b"pane output"]


def test_died_hook_is_one_double_quoted_tmux_word():
    hook = quoting.died_hook('/x/it\'s "here" $HOME #{pane_id}/t.ctl')
    body = hook.removeprefix("run-shell -b ")
    assert body.startswith('"') and body.endswith('"')
    inner = body[1:-1]
    assert re.fullmatch(r'(?:[^"\\$]|\\["\\$])*', inner)  # every quote, backslash and $ escaped
    assert "##{pane_id}" in inner


@pytest.mark.tmux
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(alphabet="#[]{}(),?:a", min_size=1, max_size=16) | tmux_text)
def test_format_literal_reads_back_unchanged(private_tmux, value):
    from cao_tmux.server import TmuxServer

    server = TmuxServer(socket_path=private_tmux.socket_path, config_file=private_tmux.config_file)
    if private_tmux.server_pid() is None:
        server.run(["new-session", "-d", "-s", "s", "--", "sleep", "1000"])
    # set-option -F expands formats as -c does (display-message would also expand strftime's %).
    out = server.run(["set-option", "-g", "-F", "@probe", quoting.format_literal(value)],
                     ["show-options", "-gv", "@probe"])
    assert out == value + "\n"


@pytest.mark.tmux
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(folder=st.sampled_from(["#[x", "a##[b", "#{pane_id}", "#(touch owned)", "x#[fg=red]#{?a,b,c}"])
       | st.text(alphabet="#[]{}(),a", min_size=1, max_size=12))
def test_the_agent_starts_in_any_folder_asked_for(backend, launch, python, tmp_path, folder):
    where = tmp_path / "work" / folder.replace("/", "_")
    where.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "cwd.txt"
    out.unlink(missing_ok=True)
    code = "import os, sys; p = sys.argv[1]; open(p + '.tmp', 'w').write(os.getcwd()); os.rename(p + '.tmp', p)"
    if not backend.list_sessions():
        backend.create_terminal(launch(["cat"], session_name="cao-keep"))
    spec = launch([python, "-c", code, str(out)], working_directory=str(where))
    backend.create_terminal(spec)
    try:
        deadline = time.monotonic() + 5
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert out.read_text() == str(where)
        assert not (tmp_path / "work" / "owned").exists()
    finally:
        backend.kill_terminal(spec.terminal_id)
