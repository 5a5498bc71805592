"""A real ``cao server`` honours ``settings.json`` written by a real ``cao config set``, below the
environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from cao_server.api_token import read_token

pytestmark = pytest.mark.tmux
CAO = str(Path(sys.executable).with_name("cao"))


def _config_set(cao_home, key: str, value: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_")}
    done = subprocess.run([CAO, "config", "set", key, value], env={**env, "CAO_HOME_DIR": str(cao_home)},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_server_takes_default_provider_and_allowed_hosts_from_the_file(spawn_server, cao_home, workdir):
    _config_set(cao_home, "terminal.default_provider", "mock_cli")
    _config_set(cao_home, "network.allowed_hosts", "cao.example")
    # An empty variable is unset: the file's provider applies (the built-in developer profile names none).
    process = spawn_server("--port", "0", CAO_DEFAULT_PROVIDER="")
    url = process.wait_ready()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {read_token(cao_home)}"},
                      trust_env=False, timeout=30) as http:
        assert http.get("/health", headers={"Host": "cao.example"}).status_code == 200
        assert http.get("/health", headers={"Host": "other.example"}).status_code == 400
        created = http.post("/sessions", params={"agent_profile": "developer", "working_directory": workdir})
        assert created.status_code == 201, created.text
        assert created.json()["provider"] == "mock_cli"
        assert http.delete(f"/sessions/{created.json()['session_name']}").status_code == 200


def test_a_bad_settings_file_stops_the_server_in_one_line(spawn_server, cao_home):
    (cao_home / "settings.json").write_text('{"server": {"provider_init_timeout": "soon"}}')
    process = spawn_server("--port", "0")
    assert process.proc.wait(timeout=60) == 1
    assert process.stderr_text() == (
        f"Error: {cao_home / 'settings.json'}: setting server.provider_init_timeout must be a number from 1 "
        f"to 3600, not 'soon' (repair it with `cao config set` or `cao config unset`)")
