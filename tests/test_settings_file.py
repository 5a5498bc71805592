"""``cao config`` and ``settings.json``: typed keys, atomic private writes, and the file honoured by the
kernel below the environment."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_kernel.cli import cli
from cao_kernel.errors import InvalidInput, NotFound
from cao_kernel.home import CaoHome
from cao_kernel.kernel import Kernel
from cao_kernel.settings_file import KEYS, check_value, parse_value, read_settings, update


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["--no-plugins", *args], env=env)


def test_set_get_list_path_round_trip(cao_home: Path) -> None:
    assert run("config", "path").output.strip() == str(cao_home / "settings.json")
    result = run("config", "set", "terminal.default_provider", "claude_code")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == '"claude_code"'
    assert run("config", "set", "network.allowed_hosts", "a.example, b.example:8080").exit_code == 0
    assert run("config", "set", "server.provider_init_timeout", "90").exit_code == 0
    assert json.loads(run("config", "get", "network.allowed_hosts").stdout) == ["a.example", "b.example:8080"]
    assert json.loads(run("config", "get", "server.provider_init_timeout").stdout) == 90
    listing = run("config", "list").stdout.splitlines()
    assert 'terminal.default_provider = "claude_code"' in listing
    assert "inbox.max_pending = 100" in listing  # a default
    data = json.loads((cao_home / "settings.json").read_text())
    assert data == {"network": {"allowed_hosts": ["a.example", "b.example:8080"]},
                    "server": {"provider_init_timeout": 90}, "terminal": {"default_provider": "claude_code"}}
    assert stat.S_IMODE((cao_home / "settings.json").stat().st_mode) == 0o600
    assert run("config", "unset", "server.provider_init_timeout").exit_code == 0
    assert json.loads(run("config", "get", "server.provider_init_timeout").stdout) == 60


def test_environment_wins_and_list_json_says_where_from(cao_home: Path) -> None:
    assert run("config", "set", "inbox.keep_days", "3").exit_code == 0
    result = run("config", "set", "inbox.max_pending", "5", env={"CAO_INBOX_MAX_PENDING": "9"})
    assert "CAO_INBOX_MAX_PENDING is set in the environment" in result.stderr
    rows = {row["key"]: row for row in json.loads(
        run("config", "list", "--json", env={"CAO_INBOX_MAX_PENDING": "9"}).stdout)}
    assert rows["inbox.max_pending"]["value"] == 9 and rows["inbox.max_pending"]["source"] == "env"
    assert rows["inbox.keep_days"]["value"] == 3 and rows["inbox.keep_days"]["source"] == "file"
    assert rows["terminal.backend"]["source"] == "default"


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("nope.key", "1", "unknown setting 'nope.key'"),
    ("inbox.max_pending", "-1", "setting inbox.max_pending must be a whole number from 0"),
    ("inbox.max_pending", "2.5", "setting inbox.max_pending must be a whole number"),
    ("server.provider_init_timeout", "nan", "setting server.provider_init_timeout must be a number"),
    ("terminal.default_provider", "Bad Name", "setting terminal.default_provider must be a name"),
    ("network.cors_origins", "ftp://x", "'ftp://x' is not one of origins"),
    ("network.allowed_hosts", '["a", 3]', "3 is not one of host names"),
])
def test_bad_key_or_value_is_named_and_nothing_is_written(cao_home: Path, key: str, value: str,
                                                          expected: str) -> None:
    result = run("config", "set", key, value)
    assert result.exit_code == 1
    assert expected in result.stderr
    assert not (cao_home / "settings.json").exists()


def test_kernel_reads_the_file_below_environment_and_explicit_settings(
        cao_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = CaoHome(cao_home)
    update(home, "terminal.default_provider", "claude_code")
    update(home, "network.allowed_hosts", ["a.example", "b.example"])
    update(home, "inbox.keep_days", 2.5)
    kernel = Kernel(load_entrypoints=False, home=cao_home)
    assert kernel.settings["CAO_DEFAULT_PROVIDER"] == "claude_code"
    assert kernel.settings["CAO_ALLOWED_HOSTS"] == "a.example,b.example"
    assert kernel.settings["CAO_INBOX_KEEP_DAYS"] == "2.5"
    monkeypatch.setenv("CAO_DEFAULT_PROVIDER", "codex")
    monkeypatch.setenv("CAO_INBOX_KEEP_DAYS", "")  # empty: unset, so the file's value holds
    kernel = Kernel(load_entrypoints=False, home=cao_home, settings={"CAO_ALLOWED_HOSTS": "c.example"})
    assert kernel.settings["CAO_DEFAULT_PROVIDER"] == "codex"
    assert kernel.settings["CAO_ALLOWED_HOSTS"] == "c.example"
    assert kernel.settings["CAO_INBOX_KEEP_DAYS"] == "2.5"


def test_server_settings_take_allowed_hosts_from_the_file(cao_home: Path) -> None:
    from cao_server.settings import ServerSettings

    update(CaoHome(cao_home), "network.allowed_hosts", ["cao.example"])
    kernel = Kernel(load_entrypoints=False, home=cao_home)
    server = ServerSettings.from_settings(kernel.settings, host="127.0.0.1", port=9889, token="t")
    assert "cao.example" in server.allowed_hosts


def test_a_bad_file_stops_the_kernel_naming_file_and_key_and_unknown_keys_are_kept(cao_home: Path) -> None:
    path = cao_home / "settings.json"
    # Upstream's own sections (agent_dirs, memory) are kept and ignored.
    path.write_text(json.dumps({"agent_dirs": {"x": "/y"}, "memory": {"enabled": True},
                                "inbox": {"max_pending": "lots"}}))
    kernel = Kernel(load_entrypoints=False, home=cao_home)  # commands that start no kernel still work
    assert run("plugins").exit_code == 0
    with pytest.raises(InvalidInput, match=r"settings\.json: setting inbox\.max_pending must be .*config"):
        asyncio.run(kernel.start())
    assert run("config", "set", "inbox.max_pending", "7").exit_code == 0  # repairable without a kernel
    data = json.loads(path.read_text())
    assert data == {"agent_dirs": {"x": "/y"}, "memory": {"enabled": True}, "inbox": {"max_pending": 7}}
    assert Kernel(load_entrypoints=False, home=cao_home).settings["CAO_INBOX_MAX_PENDING"] == "7"
    path.write_text("{not json")
    assert "is not valid JSON" in run("config", "list").stderr
    assert "is not valid JSON" in run("config", "set", "inbox.max_pending", "8").stderr
    assert path.read_text() == "{not json"  # refused, not overwritten


def test_unknown_key_lookup_lists_the_known_ones() -> None:
    with pytest.raises(NotFound, match="known settings: .*terminal.default_provider"):
        check_value("terminal.nothing", 1)


_INTS = [name for name, key in KEYS.items() if key.kind == "int"]
_NUMBERS = [name for name, key in KEYS.items() if key.kind == "number"]


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(KEYS)), raw=st.text(max_size=40))
def test_any_typed_text_is_taken_as_checked_or_refused_by_name(name: str, raw: str) -> None:
    try:
        value = parse_value(name, raw)
    except InvalidInput as exc:
        assert name in str(exc)
        return
    assert check_value(name, value) == value
    json.dumps(value)  # what is stored is plain JSON


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(_INTS + _NUMBERS), number=st.integers(-10**7, 10**7) | st.floats())
def test_numbers_in_range_are_taken_and_others_refused(name: str, number: float) -> None:
    key = KEYS[name]
    fits = key.minimum <= number <= key.maximum and (key.kind == "number" or float(number).is_integer())
    try:
        parse_value(name, repr(number))
    except InvalidInput:
        assert not fits
    else:
        assert fits


def test_concurrent_writers_keep_every_key(cao_home: Path) -> None:
    """Processes setting different keys at once: every key is in the file afterwards."""
    names = ["inbox.keep_days", "inbox.max_pending", "terminal.max_terminals", "server.mcp_connect_timeout",
             "profiles.download_timeout", "terminal.history_days"]
    script = ("import sys\nfrom cao_kernel.home import CaoHome\nfrom cao_kernel.settings_file import update\n"
              "for n in range(15):\n    update(CaoHome.from_env(), sys.argv[1], n + 1)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, name], env=os.environ.copy()) for name in names]
    assert [p.wait(timeout=60) for p in procs] == [0] * len(procs)
    assert read_settings(CaoHome(cao_home)) == {name: 15 for name in names}
