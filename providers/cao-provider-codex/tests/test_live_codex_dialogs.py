"""The real Codex's start-up dialogs, accepted by the keys the provider declares for them.

The private config cao writes keeps both dialogs away (the folder is trusted, the update check is
off), so the test writes the launch plan's files itself with those answers taken out, starts Codex
on the test's private tmux server, and presses each matching dialog's keys until Codex is ready.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import UTC, datetime

import pytest

from cao_hookspecs import LaunchContext, Terminal
from cao_provider_codex.codex_home import HOME_DIR
from cao_provider_codex.provider import codex_provider
from cao_testkit.startup_dialogs import accept_startup_dialogs

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.timeout(600)]


def _start_without_answers(live_codex, tmp_path) -> None:  # noqa: ANN001
    provider = codex_provider()
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    terminal = Terminal(id="0000d1a1", name="coder-d1a1", session_name="cao-dialogs", provider="codex",
                        agent_profile="coder")
    profile = live_codex.profile()
    runtime = tmp_path / "runtime"
    plan = provider.launch(LaunchContext(terminal=terminal, profile=profile, working_directory=str(tmp_path),
                                         runtime_dir=str(runtime), model=profile.model))
    newer = ".".join([*provider.tested_versions[-1].split(".")[:-1], "999"])
    files = dict(plan.files)
    config = files[f"{HOME_DIR}/config.toml"]
    # Trust only the folder the plan was made for (Codex asks about the repository it starts in), and
    # turn the update check on with a fresh cache naming a newer release (no network involved).
    files[f"{HOME_DIR}/config.toml"] = config.replace("check_for_update_on_startup = false",
                                                      "check_for_update_on_startup = true")
    files[f"{HOME_DIR}/version.json"] = json.dumps({"latest_version": newer,
                                                    "last_checked_at": datetime.now(UTC).isoformat()})
    for name, content in files.items():
        (runtime / name).parent.mkdir(parents=True, exist_ok=True)
        (runtime / name).write_text(content, encoding="utf-8")
    env = [arg for name, value in plan.env.items() for arg in ("-e", f"{name}={value}")]
    live_codex.tmux("new-session", "-d", "-s", "dialogs", "-x", "220", "-y", "50", "-c", str(repo), *env,
                    "--", *plan.argv)


def test_startup_dialogs_are_accepted_by_their_keys(live_codex, tmp_path):
    provider = codex_provider()
    _start_without_answers(live_codex, tmp_path)
    answered, last = accept_startup_dialogs(
        provider, lambda: live_codex.tmux("capture-pane", "-p", "-t", "dialogs"),
        lambda keys: live_codex.tmux("send-keys", "-t", "dialogs", *keys), timeout=60)
    assert set(answered) == {"update-prompt", "trust-folder"}, answered
    # "Skip" was chosen: Codex went on to its prompt, leaving only a banner about the release, which no
    # dialog pattern may take for the prompt itself. The banner can come a moment after the prompt.
    deadline = time.monotonic() + 5
    while "Update available!" not in last and time.monotonic() < deadline:
        time.sleep(0.05)
        last = live_codex.tmux("capture-pane", "-p", "-t", "dialogs")
    assert "Update available!" in last
    assert not [d.name for d in provider.startup_dialogs if re.search(d.pattern, last, re.MULTILINE)]
