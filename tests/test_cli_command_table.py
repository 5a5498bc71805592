"""The command table ``cao`` caches in the cao home, so that listing commands imports no plugin.

The subprocess tests run the real ``cao`` script with fixture distributions on ``PYTHONPATH`` and the
test's private cao home. ``tests/fixtures/plugins/table`` prints a line when it is imported, which tells
a listing read from the table from one that loaded the plugins. Distributions are "installed" and
"removed" by copying fixture folders into, and deleting them from, a folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_kernel.cli.command_table import (
    CommandRow,
    CommandTable,
    PluginEntry,
    parse_table,
    render,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "plugins"
TABLE, GOOD, IMPORT_ERROR = FIXTURES / "table", FIXTURES / "good", FIXTURES / "import_error"
CAO = Path(sys.executable).with_name("cao")
IMPORTED = "fixture_table: imported"
OWN_HELP = "Run the table fixture's command."


def cao(*args: str, path: list[Path], **env: str) -> subprocess.CompletedProcess[str]:
    assert CAO.exists(), f"the cao script is not installed next to {sys.executable}"
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path), **env)
    return subprocess.run([str(CAO), *args], env=environ, capture_output=True, text=True, timeout=60)


def tables(home: Path) -> list[Path]:
    return sorted((home / "cache").glob("commands-*.json"))


def install(site: Path, *fixtures: Path) -> None:
    """Copy fixture distributions (metadata folder and module) into ``site``."""
    for fixture in fixtures:
        for item in fixture.iterdir():
            # Bytecode left by other tests that imported the fixture in place is not part of it.
            if item.name == "__pycache__":
                continue
            if item.is_dir():
                shutil.copytree(item, site / item.name)
            else:
                shutil.copy2(item, site / item.name)


# -- listing from the table -------------------------------------------------------------------------


def test_help_is_listed_from_the_table_once_it_is_written(cao_home: Path):
    first = cao("--help", path=[TABLE])
    assert first.returncode == 0, first.stderr
    assert IMPORTED in first.stderr  # no table yet: the plugins load, and the table is written
    assert len(tables(cao_home)) == 1

    second = cao("--help", path=[TABLE])
    assert second.returncode == 0, second.stderr
    assert IMPORTED not in second.stderr
    assert second.stdout == first.stdout
    (row,) = [line for line in second.stdout.splitlines() if line.strip().startswith("fixture-table ")]
    assert row.split(None, 1)[1] == OWN_HELP


PROBE = """
import json, sys
from cao_kernel.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m, mod in sys.modules.items() if mod is not None)), file=sys.stderr)
"""


def imported_modules(*args: str, path: list[Path]) -> list[str]:
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path))
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=environ, capture_output=True, text=True,
                          timeout=60, check=True)
    return json.loads(done.stderr.strip().splitlines()[-1])


def plugin_packages() -> set[str]:
    """Top-level packages of every installed ``cao`` entry point, and the fixture's."""
    from importlib.metadata import entry_points

    return {ep.module.split(".")[0] for ep in entry_points(group="cao")} | {"cao_fixture_table"}


def test_help_version_and_builtin_help_import_no_plugin_module():
    plugins = plugin_packages()
    assert {"cao_server", "cao_tmux", "cao_provider_mock"} <= plugins  # every workspace member is installed
    imported_modules("--help", path=[TABLE])  # writes the table
    listed = imported_modules("--help", path=[TABLE])
    assert {m.split(".")[0] for m in listed} & plugins == set()
    # Not even the plugin machinery is imported to list commands.
    assert not {"pluggy", "cao_hookspecs", "cao_kernel.kernel", "cao_kernel.plugins"} & set(listed)
    # These never need the table.
    for args in (["--version"], ["doctor", "--help"], ["provider", "--help"]):
        assert {m.split(".")[0] for m in imported_modules(*args, path=[TABLE])} & plugins == set(), args


def test_a_plugin_command_loads_its_plugin_when_it_runs(cao_home: Path):
    cao("--help", path=[TABLE])
    ran = cao("fixture-table", path=[TABLE])
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "fixture-table ran\n"
    assert IMPORTED in ran.stderr


# -- the table is never trusted blindly -------------------------------------------------------------


def test_installing_upgrading_and_removing_distributions(cao_home: Path, tmp_path: Path):
    site = tmp_path / "site"
    site.mkdir()
    install(site, TABLE)
    assert IMPORTED in cao("--help", path=[site]).stderr
    assert IMPORTED not in cao("--help", path=[site]).stderr

    install(site, GOOD)
    installed = cao("--help", path=[site])
    assert IMPORTED in installed.stderr
    assert "Say hello from the fixture plugin." in installed.stdout
    assert IMPORTED not in cao("--help", path=[site]).stderr

    # An upgrade renames the metadata folder (it carries the version) and may change the code.
    (site / "cao_fixture_good-1.0.dist-info").rename(site / "cao_fixture_good-2.0.dist-info")
    module = site / "cao_fixture_good.py"
    module.write_text(module.read_text().replace("from the fixture plugin.", "from version 2."))
    upgraded = cao("--help", path=[site])
    assert IMPORTED in upgraded.stderr
    assert "Say hello from version 2." in upgraded.stdout
    assert "from the fixture plugin." not in upgraded.stdout

    shutil.rmtree(site / "cao_fixture_good-2.0.dist-info")
    module.unlink()
    removed = cao("--help", path=[site])
    assert removed.returncode == 0, removed.stderr
    assert IMPORTED in removed.stderr
    assert "Say hello" not in removed.stdout and "fixture_good" not in removed.stderr
    assert IMPORTED not in cao("--help", path=[site]).stderr


def test_changed_entry_points_and_edited_plugin_modules_rebuild_the_table(cao_home: Path, tmp_path: Path):
    site = tmp_path / "site"
    site.mkdir()
    install(site, TABLE)
    cao("--help", path=[site])

    # An editable install changes code without reinstalling anything.
    module = site / "cao_fixture_table.py"
    module.write_text(module.read_text().replace(OWN_HELP, "Run the edited command."))
    edited = cao("--help", path=[site])
    assert IMPORTED in edited.stderr and "Run the edited command." in edited.stdout
    assert IMPORTED not in cao("--help", path=[site]).stderr

    entry_points = site / "cao_fixture_table-1.0.dist-info" / "entry_points.txt"
    entry_points.write_text("[cao]\nfixture_renamed = cao_fixture_table\n")
    renamed = cao("--help", path=[site])
    assert IMPORTED in renamed.stderr
    # The table knows the plugin by its new name: the switches find it.
    hidden = cao("--help", path=[site], CAO_DISABLE_PLUGINS="fixture_renamed")
    assert IMPORTED not in hidden.stderr and "fixture-table" not in hidden.stdout


def test_a_module_gone_from_under_its_metadata_is_not_trusted(cao_home: Path, tmp_path: Path):
    site = tmp_path / "site"
    site.mkdir()
    install(site, TABLE, GOOD)
    cao("--help", path=[site])
    (site / "cao_fixture_good.py").unlink()
    run = cao("--help", path=[site])
    assert run.returncode == 0, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if "'fixture_good'" in line]
    assert "failed to load" in line and "ModuleNotFoundError" in line
    assert "fixture-hello" not in run.stdout


@pytest.mark.parametrize("damage", ["empty", "garbage", "truncated", "not a table", "other stamp"])
def test_a_corrupt_or_stale_table_is_rebuilt(cao_home: Path, damage: str):
    first = cao("--help", path=[TABLE])
    (table,) = tables(cao_home)
    valid = table.read_bytes()
    data = json.loads(valid)
    data["stamp"][0] = "another interpreter"
    table.write_bytes({
        "empty": b"",
        "garbage": b"\x00\xff{[ not json",
        "truncated": valid[: len(valid) // 2],
        "not a table": b'{"format": 1, "commands": []}',
        "other stamp": json.dumps(data).encode(),
    }[damage])
    again = cao("--help", path=[TABLE])
    assert again.returncode == 0, again.stderr
    assert IMPORTED in again.stderr
    assert again.stdout == first.stdout
    assert table.read_bytes() == valid


def test_a_home_that_cannot_be_written_only_costs_speed(tmp_path: Path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    for _ in range(2):
        run = cao("--help", path=[TABLE], CAO_HOME_DIR=str(blocked / "home"))
        assert run.returncode == 0, run.stderr
        assert IMPORTED in run.stderr and OWN_HELP in run.stdout


# -- what cao promises with a table -----------------------------------------------------------------


def test_a_broken_plugin_is_reported_on_every_run_and_never_cached(cao_home: Path, tmp_path: Path):
    for _ in range(2):
        run = cao("--help", path=[TABLE, IMPORT_ERROR])
        assert run.returncode == 0, run.stderr
        assert IMPORTED in run.stderr and OWN_HELP in run.stdout
        (line,) = [line for line in run.stderr.splitlines() if "'fixture_import_error'" in line]
        assert "failed to load" in line
    assert tables(cao_home) == []
    listed = cao("plugins", path=[TABLE, IMPORT_ERROR])
    rows = listed.stdout.splitlines()
    assert any(row.startswith("fixture_import_error ") and "failed" in row for row in rows)

    # A plugin that breaks after the table was written: the install changes the stamp.
    site = tmp_path / "site"
    site.mkdir()
    install(site, TABLE)
    cao("--help", path=[site])
    install(site, IMPORT_ERROR)
    for _ in range(2):
        run = cao("--help", path=[site])
        assert any("'fixture_import_error'" in line for line in run.stderr.splitlines())


def test_a_command_named_like_a_builtin_is_refused_from_the_table_too(cao_home: Path):
    for loaded in (True, False):
        run = cao("--help", path=[TABLE])
        assert run.returncode == 0, run.stderr
        assert (IMPORTED in run.stderr) is loaded
        (warning,) = [line for line in run.stderr.splitlines() if "'doctor'" in line]
        assert "'fixture_table' (cao-fixture-table)" in warning
        assert "built-in" in warning and "cao-kernel" in warning
        assert "Hijacked doctor." not in run.stdout
        assert "Check each provider's CLI, its version and its model API." in run.stdout


def test_switches_apply_to_the_table(cao_home: Path):
    both = [TABLE, GOOD]
    cao("--help", path=both)

    disabled = cao("--help", path=both, CAO_DISABLE_PLUGINS="fixture_table")
    assert IMPORTED not in disabled.stderr
    assert "fixture-table" not in disabled.stdout and "fixture-hello" in disabled.stdout
    assert "'doctor'" not in disabled.stderr  # nothing of a disabled plugin is reported

    only = cao("--help", path=both, CAO_LOAD_PLUGINS="fixture_good")
    assert IMPORTED not in only.stderr
    assert "fixture-hello" in only.stdout and "fixture-table" not in only.stdout
    assert "  server  " not in only.stdout  # the workspace's own plugins obey the same selection

    none = cao("--help", path=both, CAO_LOAD_PLUGINS="")
    assert "fixture-hello" not in none.stdout and "fixture-table" not in none.stdout


def test_a_table_written_with_fewer_plugins_serves_no_wider_selection(cao_home: Path):
    cao("--help", path=[TABLE, GOOD], CAO_LOAD_PLUGINS="fixture_good")
    wider = cao("--help", path=[TABLE, GOOD])
    assert IMPORTED in wider.stderr and "fixture-table" in wider.stdout


def test_no_plugins_lists_no_plugin_command_and_writes_no_table(cao_home: Path):
    run = cao("--no-plugins", "--help", path=[TABLE])
    assert run.returncode == 0, run.stderr
    assert IMPORTED not in run.stderr and "fixture-table" not in run.stdout and "'doctor'" not in run.stderr
    assert tables(cao_home) == []

    cao("--help", path=[TABLE])
    for args in (["--no-plugins", "--help"], ["--help", "--no-plugins"]):
        again = cao(*args, path=[TABLE])
        assert "fixture-table" not in again.stdout and IMPORTED not in again.stderr


# -- parsing the table ------------------------------------------------------------------------------

names = st.text(min_size=1, max_size=12)
stamps = st.recursive(st.none() | st.integers() | st.text(max_size=8),
                      lambda inner: st.lists(inner, max_size=4), max_leaves=12).map(lambda value: [value])


@st.composite
def command_tables(draw: st.DrawFn) -> CommandTable:
    plugin_names = draw(st.lists(names, unique=True, max_size=5))
    plugins = tuple(
        PluginEntry(name=name, loaded=draw(st.booleans()),
                    module=draw(st.none() | st.tuples(st.text(max_size=20), st.integers(0, 2**63),
                                                      st.integers(0, 2**40)).map(list)))
        for name in plugin_names
    )
    loaded = [p.name for p in plugins if p.loaded]
    commands: tuple[CommandRow, ...] = ()
    if loaded:
        command_names = draw(st.lists(names, unique=True, max_size=6))
        commands = tuple(
            CommandRow(name=name, help=draw(st.text(max_size=30)), plugin=draw(st.sampled_from(loaded)),
                       owner=draw(st.text(max_size=20)))
            for name in command_names
        )
    return CommandTable(stamp=draw(stamps), plugins=plugins, commands=commands)


@given(command_tables())
def test_a_table_reads_back_as_written(table: CommandTable):
    assert parse_table(render(table)) == table
    assert parse_table(render(table).encode()) == table


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)


@given(st.binary(max_size=200) | json_values.map(json.dumps).map(str.encode))
def test_anything_else_is_refused_without_raising(raw: bytes):
    table = parse_table(raw)
    assert table is None or parse_table(render(table)) == table


@given(command_tables(), st.data())
def test_a_damaged_table_is_refused(table: CommandTable, data: st.DataObject):
    document = json.loads(render(table))
    objects = [document, *document["plugins"], *document["commands"]]
    target = data.draw(st.sampled_from(objects))
    key = data.draw(st.sampled_from(sorted(target)))
    if data.draw(st.booleans()):
        del target[key]
    else:
        # A value of a type no field has (a float where an id, a flag or a list belongs).
        target[key] = 0.5
    assert parse_table(json.dumps(document)) is None
