"""Loading plugins from real entry points.

The distributions under ``tests/fixtures/plugins/<folder>/`` (a ``.dist-info`` folder plus a module) are
put on ``PYTHONPATH`` of a subprocess, so the test process never imports them and every run starts from
a clean interpreter: a good plugin, one whose import fails, one calling ``sys.exit`` at import, one with
a misspelled hook, one rejected half-way through registration, and two distributions declaring the same
entry-point name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "plugins"
INSPECT = FIXTURES / "inspect_kernel.py"
CAO = Path(sys.executable).with_name("cao")

BROKEN = {
    # folder: (entry-point name, distribution, text the recorded error must contain)
    "import_error": ("fixture_import_error", "cao-fixture-import-error",
                     "ModuleNotFoundError: No module named 'cao_fixture_missing_dependency'"),
    "exits": ("fixture_exits", "cao-fixture-exits", "SystemExit: 3"),
    "typo": ("fixture_typo", "cao-fixture-typo", "unknown hook(s) cao_regsiter_providers"),
    "badargs": ("fixture_badargs", "cao-fixture-badargs",
                "Argument(s) {'extra'} are declared in the hookimpl but can not be found in the hookspec"),
}
ALL_SINGLE = ("good", *BROKEN)


def fixture_env(folders: tuple[str, ...], **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(FIXTURES / folder) for folder in folders)
    env.update(extra)
    return env


def run(argv: list[str], folders: tuple[str, ...], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=fixture_env(folders, **extra), capture_output=True, text=True, timeout=60)


def inspect_kernel(folders: tuple[str, ...], *args: str, **extra: str) -> tuple[dict[str, Any], str]:
    proc = run([sys.executable, str(INSPECT), *args], folders, **extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def fixture_records(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Records of fixture distributions, keyed by ``name`` or ``name@distribution`` for duplicates."""
    out: dict[str, dict[str, Any]] = {}
    for record in state["records"]:
        if (record["distribution"] or "").startswith("cao-fixture-"):
            key = record["name"]
            if key in out:
                key = f"{key}@{record['distribution']}"
            out[key] = record
    return out


def failure_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("cao: ") and "fixture" in line]


def test_good_plugins_load_and_broken_ones_are_isolated():
    state, stderr = inspect_kernel(ALL_SINGLE)
    records = fixture_records(state)

    good = records["fixture_good"]
    assert (good["status"], good["distribution"], good["version"]) == ("active", "cao-fixture-good", "1.0")
    assert good["hooks"] == ["cao_register_commands", "cao_register_providers"]
    assert good["entry_point"] == "cao_fixture_good" and good["error"] is None
    assert "fixture_echo" in state["providers"] and "fixture-hello" in state["commands"]

    for name, dist, error in BROKEN.values():
        record = records[name]
        assert record["status"] == "failed", record
        assert record["distribution"] == dist and record["hooks"] == []
        assert error in record["error"], record["error"]
        assert "\n" not in record["error"]
        # Nothing of a failed plugin stays registered, not even the hooks pluggy accepted first.
        assert name not in state["registered"]
        assert all(name not in owners for owners in state["impls"].values()), state["impls"]

    # One line on stderr per failure, naming the plugin, its distribution and the error.
    lines = failure_lines(stderr)
    assert len(lines) == len(BROKEN), stderr
    for name, dist, error in BROKEN.values():
        (line,) = [line for line in lines if f"'{name}'" in line]
        assert line.startswith(f"cao: plugin '{name}' ({dist}) failed to load: ")
        assert error in line


def test_partial_registration_is_rolled_back():
    # badargs' first hook (cao_after_message_queued) is accepted before its second is rejected.
    state, _ = inspect_kernel(("badargs", "typo"))
    assert state["impls"]["cao_after_message_queued"] == []
    assert state["modules"] == ["cao_fixture_badargs", "cao_fixture_typo"]


def test_duplicate_entry_point_names_name_both_distributions():
    state, stderr = inspect_kernel(("dup_a", "dup_b"))
    records = fixture_records(state)
    kept, dropped = records["fixture_dup"], records["fixture_dup@cao-fixture-dup-b"]
    assert (kept["status"], kept["distribution"]) == ("active", "cao-fixture-dup-a")
    assert dropped["status"] == "failed"
    assert "cao-fixture-dup-a" in dropped["error"] and "cao-fixture-dup-b" in dropped["error"]
    # Only the kept distribution is imported and contributes.
    assert state["modules"] == ["cao_fixture_dup_a"]
    assert "fixture_dup_a" in state["inbox_stores"] and "fixture_dup_b" not in state["inbox_stores"]
    (line,) = failure_lines(stderr)
    assert "'fixture_dup'" in line and "cao-fixture-dup-a" in line and "cao-fixture-dup-b" in line

    # The order of sys.path decides which one is kept.
    state, _ = inspect_kernel(("dup_b", "dup_a"))
    assert fixture_records(state)["fixture_dup"]["distribution"] == "cao-fixture-dup-b"
    assert state["modules"] == ["cao_fixture_dup_b"]


@pytest.mark.parametrize(
    ("load", "active"),
    [
        ("", set()),
        ("fixture_good", {"fixture_good"}),
        (" fixture_good , fixture_exits ,", {"fixture_good"}),
    ],
)
def test_cao_load_plugins_selects_entry_points(load: str, active: set[str]):
    state, stderr = inspect_kernel(ALL_SINGLE, CAO_LOAD_PLUGINS=load)
    records = fixture_records(state)
    wanted = {name.strip() for name in load.split(",") if name.strip()}
    assert {n for n, r in records.items() if r["status"] == "active"} == active
    for name, record in records.items():
        if name not in wanted:
            assert record["status"] == "blocked", record
    # Entry points not selected are never imported.
    assert set(state["modules"]) <= {f"cao_{name}" for name in wanted}
    assert ("cao_fixture_good" in state["modules"]) == ("fixture_good" in wanted)
    assert len(failure_lines(stderr)) == len(wanted - active)
    # The workspace's own plugins obey the same selection.
    others = [r for r in state["records"] if not (r["distribution"] or "").startswith("cao-fixture-")]
    assert all(r["status"] == "blocked" for r in others)


def test_cao_disable_plugins_blocks_named_entry_points():
    state, stderr = inspect_kernel(ALL_SINGLE, CAO_DISABLE_PLUGINS="fixture_import_error,fixture_exits")
    records = fixture_records(state)
    assert records["fixture_import_error"]["status"] == "blocked"
    assert records["fixture_exits"]["status"] == "blocked"
    assert records["fixture_import_error"]["error"] is None
    assert records["fixture_good"]["status"] == "active"
    assert "cao_fixture_exits" not in state["modules"] and "cao_fixture_import_error" not in state["modules"]
    assert {line.split("'")[1] for line in failure_lines(stderr)} == {"fixture_typo", "fixture_badargs"}

    # Blocking wins over selecting.
    state, _ = inspect_kernel(("good",), CAO_LOAD_PLUGINS="fixture_good", CAO_DISABLE_PLUGINS="fixture_good")
    assert fixture_records(state)["fixture_good"]["status"] == "blocked"
    assert state["modules"] == []


def test_no_plugins_loads_no_entry_point():
    state, stderr = inspect_kernel(ALL_SINGLE, "--no-plugins", CAO_LOAD_PLUGINS="fixture_good")
    assert all(r["status"] == "blocked" for r in state["records"])
    assert state["modules"] == [] and failure_lines(stderr) == []
    assert state["registered"] == ["cao_kernel.builtins"]


def test_strict_mode_raises_on_the_first_failure():
    state, stderr = inspect_kernel(ALL_SINGLE, CAO_STRICT_PLUGINS="1")
    assert state["raised"] == "PluginError"
    assert "fixture_" in state["error"] and "failed to load" in state["error"]
    assert len(failure_lines(stderr)) == 1

    state, _ = inspect_kernel(("dup_a", "dup_b"), CAO_STRICT_PLUGINS="true")
    assert state["raised"] == "PluginError"
    assert "cao-fixture-dup-a" in state["error"] and "cao-fixture-dup-b" in state["error"]

    # Strict mode with healthy plugins changes nothing.
    state, stderr = inspect_kernel(("good",), CAO_STRICT_PLUGINS="1")
    assert fixture_records(state)["fixture_good"]["status"] == "active"
    assert failure_lines(stderr) == []


def test_kernel_registers_explicit_plugins_alongside_entry_points(cao_home: Path):
    from cao_hookspecs import hookimpl
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    class Explicit:
        @hookimpl
        def cao_shutdown(self) -> None:
            pass

    kernel = Kernel(plugins=[Explicit()], policy=LoadPolicy(only=()), home=cao_home)
    assert [r.hooks for r in kernel.plugin_records() if r.distribution is None] == [("cao_shutdown",)]


# -- the cao command with broken plugins installed --------------------------------------------------


def test_cao_plugins_json_reports_broken_plugins_and_exits_0():
    assert CAO.exists(), f"the cao script is not installed next to {sys.executable}"
    proc = run([str(CAO), "plugins", "--json"], ALL_SINGLE)
    assert proc.returncode == 0, proc.stderr
    records = fixture_records({"records": json.loads(proc.stdout)})
    assert records["fixture_good"]["status"] == "active"
    for name, dist, error in BROKEN.values():
        assert records[name]["status"] == "failed" and error in records[name]["error"]
    assert len(failure_lines(proc.stderr)) == len(BROKEN)


def test_cao_help_and_plugins_still_work_with_broken_plugins():
    helped = run([str(CAO), "--help"], ALL_SINGLE)
    assert helped.returncode == 0, helped.stderr
    assert "plugins" in helped.stdout and "fixture-hello" in helped.stdout
    assert len(failure_lines(helped.stderr)) == len(BROKEN)

    listed = run([str(CAO), "plugins"], ALL_SINGLE)
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    (typo_row,) = [i for i, row in enumerate(rows) if row.startswith("fixture_typo ")]
    assert "failed" in rows[typo_row] and "cao-fixture-typo 1.0" in rows[typo_row]
    assert "unknown hook(s) cao_regsiter_providers" in rows[typo_row + 1]
    assert any(row.startswith("fixture_good ") and "active" in row for row in rows)


def test_cao_no_plugins_shows_plugins_blocked():
    proc = run([str(CAO), "--no-plugins", "plugins", "--json"], ALL_SINGLE)
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    fixtures = {r["name"] for r in records if (r["distribution"] or "").startswith("cao-fixture-")}
    assert fixtures == {name for name, _, _ in BROKEN.values()} | {"fixture_good"}
    assert all(r["status"] == "blocked" and r["error"] is None for r in records)
    assert failure_lines(proc.stderr) == []

    helped = run([str(CAO), "--no-plugins", "--help"], ALL_SINGLE)
    assert helped.returncode == 0 and "fixture-hello" not in helped.stdout


def test_a_plugin_registered_under_a_switched_off_name_is_refused_by_name(cao_home: Path):
    # pluggy ignores a registration under a blocked name without a word; the plugin's hooks then never
    # run. The kernel says so instead.
    from cao_hookspecs import hookimpl
    from cao_kernel.errors import PluginError
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    class Observer:
        @hookimpl
        def cao_after_terminal_created(self, terminal):
            pass

    kernel = Kernel(policy=LoadPolicy(only=("tmux",)), home=cao_home)
    with pytest.raises(PluginError, match="plugin name 'mock_cli' is switched off"):
        kernel.register_plugin(Observer(), name="mock_cli")
    assert kernel.register_plugin(Observer(), name="observer") == "observer"


async def test_list_providers_finds_a_program_through_its_override_variable(cao_home: Path, tmp_path: Path,
                                                                           monkeypatch):
    from cao_hookspecs import ProviderSpec, hookimpl
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    class Provider:
        @hookimpl
        def cao_register_providers(self):
            return [ProviderSpec(name="fake_cli", binary="fakecli-nowhere", binary_env="CAO_FAKE_CLI_BIN",
                                 launch=lambda ctx: None, detect_status=lambda screen: None,
                                 extract_last_message=lambda screen: "")]

    program = tmp_path / "fakecli"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    kernel = Kernel(plugins=[Provider()], policy=LoadPolicy(only=()), home=cao_home)

    async def installed() -> bool:
        (row,) = [p for p in await kernel.list_providers() if p["name"] == "fake_cli"]
        return row["installed"]

    monkeypatch.delenv("CAO_FAKE_CLI_BIN", raising=False)
    assert await installed() is False
    monkeypatch.setenv("CAO_FAKE_CLI_BIN", str(program))
    assert await installed() is True
    monkeypatch.setenv("CAO_FAKE_CLI_BIN", str(tmp_path / "missing"))
    assert await installed() is False


# -- reading a distribution's name and version ------------------------------------------------------

header_names = st.sampled_from(["Summary", "Requires-Dist", "License", "Author", "Metadata-Version"])
header_values = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20).map(
    str.strip)


@given(
    name=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True),
    version=st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,2}", fullmatch=True),
    others=st.lists(st.tuples(header_names, header_values), max_size=4),
    spelling=st.sampled_from(["Name", "name", "NAME"]),
    body=st.text(max_size=40),
)
def test_name_and_version_are_read_as_the_metadata_parser_reads_them(name, version, others, spelling, body):
    import email

    from cao_kernel.plugins import _headers

    lines = [f"{key}: {value}" for key, value in others]
    lines[len(lines) // 2:len(lines) // 2] = [f"{spelling}: {name}", f"Version: {version}"]
    text = "\n".join(lines) + "\n\n" + body
    parsed = email.message_from_string(text)
    assert _headers(text, ("name", "version")) == {"name": parsed["Name"], "version": parsed["Version"]}
