"""``cao console`` as a command: what it prints when it cannot start the screen, ``--web``, and that
listing or asking for help never imports Textual."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CAO = Path(sys.executable).with_name("cao")


def cao(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    assert CAO.exists(), f"the cao script is not installed next to {sys.executable}"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
    environ.update({"CAO_HOME_DIR": os.environ["CAO_HOME_DIR"], **env})
    # stdin from /dev/null: were the screen ever to start here, it would end at once instead of waiting.
    return subprocess.run([str(CAO), *args], env=environ, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("args", [[], ["--web"], ["--session", "cao-x"]])
def test_a_server_that_is_down_is_one_line_naming_its_address(args: list[str]):
    port = free_port()
    done = cao("console", *args, CAO_API_PORT=str(port))
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert f"http://127.0.0.1:{port}" in line and "cao server" in line, line


def test_web_prints_a_one_time_login_link_that_lets_a_browser_in(live: Any):
    import httpx

    done = cao("console", "--web", **live.settings)
    assert done.returncode == 0, done.stderr
    (url,) = done.stdout.splitlines()
    assert url.startswith(f"{live.url}/login?code="), url
    with httpx.Client(trust_env=False) as browser:
        first = browser.get(url)
        assert first.status_code == 200 and "cao_session" in browser.cookies
    assert httpx.get(url, trust_env=False).status_code == 401  # used up


def test_web_with_a_token_that_is_not_the_servers_is_refused_in_one_line(live: Any, tmp_path: Path):
    (tmp_path / "api-token").write_text("x" * 43 + "\n")
    os.chmod(tmp_path / "api-token", 0o600)
    done = cao("console", "--web", **{**live.settings, "CAO_HOME_DIR": str(tmp_path)})
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr


PROBE = """
import json, sys
from cao_kernel.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def imported(*args: str, **env: str) -> set[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
    environ.update({"CAO_HOME_DIR": os.environ["CAO_HOME_DIR"], **env})
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=environ, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    return {name.split(".")[0] for name in json.loads(done.stderr.strip().splitlines()[-1])}


def test_help_and_the_web_link_never_import_textual():
    listed = subprocess.run([str(CAO), "--help"], capture_output=True, text=True, timeout=60,
                            env={**os.environ}).stdout
    assert any(line.split()[:1] == ["console"] for line in listed.splitlines()), listed
    # The first listing loads every plugin (and writes the command table), the second reads the table.
    for args in (["--help"], ["--help"], ["console", "--help"]):
        modules = imported(*args)
        assert not {"textual", "rich"} & modules, args
        if args[0] == "console":
            assert "cao_console" in modules  # the command was loaded, and still no Textual
    assert "textual" not in imported("console", "--web", CAO_API_PORT=str(free_port()))
