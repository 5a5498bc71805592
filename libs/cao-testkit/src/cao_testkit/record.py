"""Record a provider's screens, from the real CLI, as its detector's test fixtures.

    python -m cao_testkit.record PACKAGE_FOLDER [--version X] [--out DIR] [--only SCENARIO ...]

It reads ``RECORDING`` from the package's ``scripts/record_screens.py`` (a
:class:`~cao_testkit.recording.Recording`), gets the CLI at the newest tested version (or ``--version``),
runs every scenario through cao's own tmux backend on a private tmux server, and writes
``tests/screens/<version>/<name>.txt`` plus ``manifest.json`` (or into ``--out``). The manifest names the
scenarios file in ``recorded_with``, from the root of the repository's workspace (from the package
folder outside one). ``--only`` records the named scenarios again and keeps the other screens of the
folder; without it the folder is recorded afresh. Nothing is edited after capture: when a screen looks
wrong, fix the scenario and record again.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from cao_kernel.testing.screens import MANIFEST

from .models.cli import InstalledCli
from .recorder import recording_arguments, write_manifest
from .recording import Recording, Retry, scenario_name, world

__all__ = ["SCENARIOS_FILE", "load_recording", "main", "record", "recorded_with"]

#: Where a provider package keeps its recording, from the package folder.
SCENARIOS_FILE = Path("scripts") / "record_screens.py"


def load_recording(package: Path) -> Recording:
    """The ``RECORDING`` of the package in folder ``package``."""
    path = package / SCENARIOS_FILE
    if not path.is_file():
        raise SystemExit(f"{package} has no {SCENARIOS_FILE} (is it a provider package's folder?)")
    name = "cao_screens_" + re.sub(r"\W", "_", package.resolve().name)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    recording = getattr(module, "RECORDING", None)
    if not isinstance(recording, Recording):
        raise SystemExit(f"{path} defines no RECORDING (a cao_testkit.recording.Recording)")
    return recording


def _is_workspace_root(folder: Path) -> bool:
    project = folder / "pyproject.toml"
    if not project.is_file():
        return False
    settings = tomllib.loads(project.read_text(encoding="utf-8"))
    return "workspace" in settings.get("tool", {}).get("uv", {})


def recorded_with(package: Path) -> str:
    """The package's scenarios file as a manifest names it: from the root of the workspace holding the
    package, or from the package folder when no workspace does."""
    package = package.resolve()
    base = next((folder for folder in package.parents if _is_workspace_root(folder)), package)
    return (package / SCENARIOS_FILE).relative_to(base).as_posix()


def record(recording: Recording, cli: InstalledCli, out: Path, only: set[str]) -> dict[str, Any]:
    """Run the scenarios (those named in ``only``, when given) and return the manifest entries of the
    screens they saved, in the order they were saved."""
    scenarios = [s for s in recording.scenarios if not only or scenario_name(s) in only]
    if not recording.world_per_scenario:
        with world(recording, cli, out) as shared:
            for scenario in scenarios:
                scenario(shared)
        return shared.screens
    screens: dict[str, Any] = {}
    for scenario in scenarios:
        screens.update(_tried(recording, cli, out, scenario))
    return screens


def _tried(recording: Recording, cli: InstalledCli, out: Path, scenario: Any) -> dict[str, Any]:
    name = scenario_name(scenario)
    for attempt in range(1, recording.attempts + 1):
        try:
            with world(recording, cli, out) as own:
                scenario(own)
            return own.screens
        except Retry as missed:
            print(f"{name}: attempt {attempt}: {missed}", file=sys.stderr)
    raise SystemExit(f"{name}: not captured in {recording.attempts} attempts")


def _parser(recording: Recording | None) -> argparse.ArgumentParser:
    if recording is None:
        parser = recording_arguments(__doc__, version="the newest tested", cli="the CLI's")
    else:
        parser = recording_arguments(__doc__, version=recording.provider.tested_versions[-1],
                                     cli=recording.package)
    parser.prog = "python -m cao_testkit.record"
    parser.add_argument("package", type=Path, metavar="PACKAGE_FOLDER",
                        help="the provider package's folder (it holds scripts/record_screens.py)")
    parser.add_argument("--only", action="append", default=[], metavar="SCENARIO",
                        help="record only this scenario (repeatable); the folder's other screens stay")
    return parser


def _arguments(argv: list[str]) -> tuple[Path, Recording, argparse.Namespace]:
    # The package comes first: its recording gives the default version.
    first = argparse.ArgumentParser(add_help=False)
    for option in ("--version", "--out", "--only"):
        first.add_argument(option, action="append")
    first.add_argument("package", type=Path, nargs="?")
    known, _ = first.parse_known_args(argv)
    if known.package is None:
        _parser(None).parse_args(argv)  # prints the help, or says the folder is missing
        raise SystemExit(2)
    recording = load_recording(known.package)
    return known.package, recording, _parser(recording).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    package, recording, args = _arguments(list(sys.argv[1:] if argv is None else argv))
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed")
    known = {scenario_name(s) for s in recording.scenarios}
    unknown = sorted(set(args.only) - known)
    if unknown:
        raise SystemExit(f"no scenario {', '.join(unknown)} (scenarios: {', '.join(sorted(known))})")
    with tempfile.TemporaryDirectory(prefix="cao-record-") as scratch:
        cli = recording.cli(recording, args.version, Path(scratch))
        out = args.out or package / "tests" / "screens" / cli.version
        version_output = recording.version_output(cli)
        print(f"recording {recording.package} {cli.version} ({version_output}) into {out}")
        kept: dict[str, Any] = {}
        if args.only and (out / MANIFEST).is_file():
            kept = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("screens", {})
        elif out.exists():
            shutil.rmtree(out)
        screens = record(recording, cli, out, set(args.only))
    write_manifest(out, package=recording.package, version=cli.version, version_output=version_output,
                   recorded_with=recorded_with(package), screens={**kept, **screens})
    return 0


if __name__ == "__main__":
    sys.exit(main())
