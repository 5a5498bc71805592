"""``python -m cao_testkit.record``: one command records every provider's screens from its scenarios.

The recordings here drive the real mock agent through cao's tmux backend on private tmux servers.
"""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cao_provider_mock.provider import mock_cli_command, mock_provider
from cao_testkit.models import Script, reply
from cao_testkit.models.anthropic import AnthropicServer
from cao_testkit.models.script import ScriptError
from cao_testkit.record import load_recording, recorded_with
from cao_testkit.recording import Recording, at_size, program, scenario_name, world

ROOT = Path(__file__).resolve().parents[3]
MOCK = ROOT / "providers" / "cao-provider-mock"

# A package of scenarios for the mock agent: ``first`` saves its idle screen; ``flaky`` misses its
# screen on the first try (as a scenario racing a short-lived state does) and saves it on the second.
SCENARIOS = '''
from pathlib import Path

from cao_hookspecs import AgentProfile
from cao_provider_mock.provider import NAME, mock_cli_command, mock_provider
from cao_testkit.recording import Recording, Retry, program

TRIES = Path(__file__).parent / "tries"


def _prompt(screen):
    rows = [row for row in screen.splitlines() if row.strip()]
    return bool(rows) and rows[-1].strip() == "\\u276f"


def _start(world):
    rec = world.recorder((100, 20), timeout=10.0, settle=0.2)
    rec.start(AgentProfile(name="recorder", provider=NAME, extra={"mock_delay_ms": 0}))
    return rec


def first(world):
    rec = _start(world)
    rec.save("idle", rec.wait(_prompt, "the prompt"), "idle", note=f"terminal {rec.terminal_id}")
    rec.stop()


def flaky(world):
    TRIES.write_text(TRIES.read_text() + "x" if TRIES.exists() else "x")
    if len(TRIES.read_text()) == 1:
        raise Retry("missed it")
    rec = _start(world)
    rec.wait(_prompt, "the prompt")
    rec.type("hello")
    screen = rec.wait(lambda s: "> MOCK: hello" in s and _prompt(s), "the answer")
    rec.save("completed", screen, "completed", last_message="hello", note=f"terminal {rec.terminal_id}")
    rec.stop()


RECORDING = Recording(provider=mock_provider(), package="cao-provider-mock", cli=program(mock_cli_command),
                      scenarios=(first, flaky), world_per_scenario=True, attempts=2)
'''


def run_record(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cao_testkit.record", *args], capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    folder = tmp_path / "cao-provider-probe"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "record_screens.py").write_text(SCENARIOS, encoding="utf-8")
    return folder


def test_the_manifest_names_the_scenarios_file_from_the_workspace_root_or_else_the_package(tmp_path):
    workspace = tmp_path / "repo"
    member = workspace / "providers" / "cao-provider-acme"
    member.mkdir(parents=True)
    (workspace / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["providers/*"]\n')
    (member / "pyproject.toml").write_text('[project]\nname = "cao-provider-acme"\n')
    assert recorded_with(member) == "providers/cao-provider-acme/scripts/record_screens.py"
    assert recorded_with(tmp_path / "alone") == "scripts/record_screens.py"
    committed = json.loads((MOCK / "tests" / "screens" / "0.1.0" / "manifest.json").read_text())
    assert recorded_with(MOCK) == committed["recorded_with"]


def test_a_folder_without_a_recording_is_refused_saying_why(tmp_path):
    with pytest.raises(SystemExit, match="has no scripts/record_screens.py"):
        load_recording(tmp_path)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "record_screens.py").write_text("SCENARIOS = ()\n")
    with pytest.raises(SystemExit, match="defines no RECORDING"):
        load_recording(tmp_path)
    assert isinstance(load_recording(MOCK), Recording)


@pytest.mark.tmux
def test_each_scenario_in_a_world_of_its_own_tried_again_when_it_misses(package, tmp_path):
    out = tmp_path / "screens"
    done = run_record(str(package), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "flaky: attempt 1: missed it" in done.stderr
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["package"] == "cao-provider-mock" and manifest["version"] == "0.1.0"
    assert manifest["version_output"] == "mock_cli 0.1.0"
    assert manifest["recorded_with"] == "scripts/record_screens.py"
    # Each world numbers its terminals afresh.
    assert manifest["screens"] == {
        "idle": {"status": "idle", "size": [100, 20], "note": "terminal 00000001"},
        "completed": {"status": "completed", "size": [100, 20], "last_message": "hello",
                      "note": "terminal 00000001"},
    }
    assert sorted(p.name for p in out.iterdir()) == ["completed.txt", "idle.txt", "manifest.json"]

    # --only records that scenario again and keeps the folder's other screens.
    (out / "idle.txt").write_text("stale\n", encoding="utf-8")
    done = run_record(str(package), "--out", str(out), "--only", "first")
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["screens"] == manifest["screens"]
    assert "\u276f" in (out / "idle.txt").read_text(encoding="utf-8")

    done = run_record(str(package), "--out", str(out), "--only", "third")
    assert done.returncode != 0 and "no scenario third (scenarios: first, flaky)" in done.stderr


def test_a_version_the_program_is_not_cannot_be_recorded(package, tmp_path):
    done = run_record(str(package), "--version", "9.9.9", "--out", str(tmp_path / "screens"))
    assert done.returncode != 0
    assert "is version 0.1.0, not 9.9.9" in done.stderr
    assert not (tmp_path / "screens").exists()


def test_a_scenario_again_at_another_size_is_named_and_suffixed_by_it():
    calls = []

    def record_turns(world, size=(220, 50), suffix=""):
        calls.append((world, size, suffix))

    narrow = at_size(record_turns, (100, 30))
    assert scenario_name(narrow) == "record_turns-100x30" and scenario_name(record_turns) == "record_turns"
    narrow("the world")
    assert calls == [("the world", (100, 30), "-100x30")]


def _recording(**fields) -> Recording:
    return Recording(provider=mock_provider(), package="cao-provider-mock", cli=program(mock_cli_command),
                     scenarios=(), **fields)


@pytest.mark.tmux
def test_a_world_gives_one_recorder_per_size_made_with_its_first_options(tmp_path):
    recording = _recording()
    cli = recording.cli(recording, "0.1.0", tmp_path)
    with world(recording, cli, tmp_path / "screens") as shared:
        wide = shared.recorder(settle=0.2)
        assert shared.recorder(settle=0.2) is wide
        assert shared.recorder((100, 30)) is not wide
        assert wide.workdir == shared.home / "project" and wide.workdir.is_dir()
        with pytest.raises(ValueError, match="at 220x50 was made with other options"):
            shared.recorder(settle=0.5)


@pytest.mark.tmux
def test_a_shared_world_ends_with_the_model_script_used_up(tmp_path):
    recording = _recording(model_server=lambda: AnthropicServer(Script(reply("never asked for"))))
    cli = recording.cli(recording, "0.1.0", tmp_path)
    with pytest.raises(ScriptError, match="1 scripted turn"):
        with world(recording, cli, tmp_path / "screens") as shared:
            assert shared.server.url.startswith("http://127.0.0.1:")


@pytest.mark.tmux
@pytest.mark.slow
def test_recording_the_mock_again_reproduces_its_committed_screens(tmp_path):
    out = tmp_path / "screens"
    done = run_record(str(MOCK), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    committed = MOCK / "tests" / "screens" / "0.1.0"
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in committed.iterdir())
    mismatched = [p.name for p in committed.iterdir() if not filecmp.cmp(p, out / p.name, shallow=False)]
    assert not mismatched, mismatched
