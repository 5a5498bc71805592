"""How fast does the ``cao`` command start?

Times ``cao --help``, ``cao --version`` and ``cao plugins --json`` as real subprocesses of the
workspace venv's ``cao`` script (every entry-point plugin loads, as for a user), with ``python -c pass``
on the same interpreter as the floor no command can beat. Prints median, p90 and min of wall-clock time
and the median CPU time (steadier when other work shares the machine), then the modules
``cao --help`` imports beyond the standard library (from ``-X importtime``), heaviest first, so a plugin
that imports something heavy at entry-point load shows up by name.

The target: ``cao --help`` median <= 0.1 s with every workspace member installed. Upstream CAO 2.5.4's
``cao --help`` takes 0.111 s (median of 10, measured side by side on one machine); the ratio to it is
printed and stored (higher: faster than upstream).

``PYTHONDONTWRITEBYTECODE`` is removed from the commands' environment: a user's Python caches bytecode,
so the warm-up runs write the ``.pyc`` files a user's first run would write.

Usage::

    uv run python bench/cli_help.py [--runs 20] [--warmup 3] [--cao .venv/bin/cao] [--check]

Results go to ``bench/results/cli_help.json``. ``--check`` exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from benchlib import ROOT, format_table, machine, summarize, time_command, write_result

TARGET_COMMAND = "cao --help"
TARGET_MEDIAN_S = 0.1
UPSTREAM_MEDIAN_S = 0.111
COMMANDS = (
    ("cao --help", ["--help"]),
    ("cao --version", ["--version"]),
    ("cao plugins --json", ["plugins", "--json"]),
)
# Settings that would change which plugins load; the benchmark measures the default: all of them.
PLUGIN_SETTINGS = ("CAO_LOAD_PLUGINS", "CAO_DISABLE_PLUGINS", "CAO_STRICT_PLUGINS")
REMOVED_FROM_ENV = (*PLUGIN_SETTINGS, "PYTHONDONTWRITEBYTECODE")


def workspace_members(root: Path = ROOT) -> list[str]:
    """Distribution names of the root project and every workspace member."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    workspace = config.get("tool", {}).get("uv", {}).get("workspace", {})
    excluded = {(root / path).resolve()
                for pattern in workspace.get("exclude", []) for path in glob.glob(pattern, root_dir=root)}
    names = [config["project"]["name"]]
    for pattern in workspace.get("members", []):
        for folder in sorted(glob.glob(pattern, root_dir=root)):
            path = (root / folder).resolve()
            if path in excluded or not (path / "pyproject.toml").is_file():
                continue
            member = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
            names.append(member["project"]["name"])
    return names


def installed_versions(python: Path, names: list[str]) -> dict[str, str | None]:
    """Version of each distribution in the environment of ``python`` (None when not installed)."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for n in json.loads(sys.argv[1]):\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: out[n] = None\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([str(python), "-c", code, json.dumps(names)], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout)


def parse_importtime(stderr: str) -> list[tuple[str, int, int]]:
    """``(module, self_us, cumulative_us)`` for each line of ``-X importtime`` output."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line[len("import time:"):].split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header line
        rows.append((fields[2].strip(), int(fields[0]), int(fields[1])))
    return rows


def _distribution_of(package: str, dists: dict[str, list[str]]) -> str | None:
    if package in dists:
        return ",".join(dists[package])
    # Editable installs (the workspace members) are missing from packages_distributions().
    try:
        return importlib.metadata.distribution(package.replace("_", "-")).metadata["Name"]
    except importlib.metadata.PackageNotFoundError:
        return None


def third_party_imports(modules: list[str], rows: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    """Modules outside the standard library, grouped by top-level package, heaviest first.

    ``modules`` is what ``sys.modules`` held after ``cao --help`` (complete); ``rows`` is the
    ``-X importtime`` output, which leaves out modules loaded through ``importlib.import_module`` (as
    entry points are) but still times the ``import`` statements inside them.
    """
    dists = importlib.metadata.packages_distributions()
    self_us: dict[str, int] = {}
    for module, us, _ in rows:
        self_us[module] = self_us.get(module, 0) + us
    groups: dict[str, dict[str, Any]] = {}
    for module in modules:
        top = module.split(".")[0]
        if top in sys.stdlib_module_names or top in sys.builtin_module_names or top.startswith("_"):
            continue
        group = groups.setdefault(top, {"package": top, "distribution": _distribution_of(top, dists),
                                        "modules": 0, "self_ms": 0.0})
        group["modules"] += 1
        group["self_ms"] += self_us.get(module, 0) / 1000
    for group in groups.values():
        group["self_ms"] = round(group["self_ms"], 2)
    return sorted(groups.values(), key=lambda g: (-g["self_ms"], g["package"]))


# Runs the cao script's own entry point and reports sys.modules, which -X importtime cannot fully give.
_MODULES_AFTER_HELP = """
import json, os, sys
sys.argv = ["cao", "--help"]
from cao_kernel.cli import main
try:
    main()
except SystemExit:
    pass
with open(os.environ["CAO_BENCH_MODULES"], "w") as f:
    json.dump(sorted(sys.modules), f)
"""


def import_profile(cao: Path, python: Path, env: dict[str, str]) -> dict[str, Any]:
    """What ``cao --help`` imports: module counts, import time, and the packages beyond the stdlib.

    The fastest of three ``-X importtime`` runs is kept: the profile is for ranking, not for timing.
    """
    best: list[tuple[str, int, int]] | None = None
    for _ in range(3):
        proc = subprocess.run([str(cao), "--help"], env=dict(env, PYTHONPROFILEIMPORTTIME="1"),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"cao --help exited {proc.returncode} under -X importtime")
        rows = parse_importtime(proc.stderr)
        if best is None or sum(r[1] for r in rows) < sum(r[1] for r in best):
            best = rows
    assert best is not None
    with tempfile.TemporaryDirectory(prefix="cao-bench-") as tmp:
        out = Path(tmp) / "modules.json"
        probe_env = dict(env, CAO_BENCH_MODULES=str(out))
        # Twice: `python -c` searches its own path first, so the first run writes its own command table.
        for _ in range(2):
            subprocess.run([str(python), "-c", _MODULES_AFTER_HELP], env=probe_env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, check=True)
        modules = json.loads(out.read_text())
    third = third_party_imports(modules, best)
    total_ms = sum(r[1] for r in best) / 1000
    return {
        "modules_imported": len(modules),
        "total_import_ms": round(total_ms, 2),
        "third_party_import_ms": round(sum(g["self_ms"] for g in third), 2),
        "third_party": third,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per command (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--cao", type=Path, default=ROOT / ".venv" / "bin" / "cao", help="the cao script")
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON file (default bench/results/cli_help.json)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    cao = args.cao.absolute()
    if not os.access(cao, os.X_OK):
        parser.error(f"{cao} is not an executable cao script; run: bash scripts/bootstrap.sh")
    python = cao.parent / "python"

    members = workspace_members()
    versions = installed_versions(python, members)
    missing = [name for name, version in versions.items() if version is None]

    with tempfile.TemporaryDirectory(prefix="cao-bench-home-") as home:
        env = {k: v for k, v in os.environ.items() if k not in REMOVED_FROM_ENV}
        env["CAO_HOME_DIR"] = home  # never touch the user's real cao home
        plugins = json.loads(subprocess.run([str(cao), "plugins", "--json"], env=env, capture_output=True,
                                            text=True, check=True).stdout)
        results: dict[str, Any] = {}
        timed = [("python -c pass", [str(python), "-c", "pass"])]
        timed += [(label, [str(cao), *cli_args]) for label, cli_args in COMMANDS]
        for label, command in timed:
            wall, cpu = time_command(command, runs=args.runs, warmup=args.warmup, env=env)
            results[label] = {**summarize(wall), "cpu_median": summarize(cpu)["median"]}
        imports = import_profile(cao, python, env)

    median = results[TARGET_COMMAND]["median"]
    passed = median <= TARGET_MEDIAN_S and not missing
    rows = [(label, *(f"{r[k] * 1000:.1f}" for k in ("median", "p90", "min", "cpu_median")))
            for label, r in results.items()]
    print(f"{args.runs} runs each after {args.warmup} warm-up runs; times in ms")
    print(format_table(("command", "median", "p90", "min", "cpu median"), rows))
    print()
    print(f"`cao --help` ends with {imports['modules_imported']} modules loaded; -X importtime total "
          f"{imports['total_import_ms']:.1f} ms, of which beyond the standard library "
          f"{imports['third_party_import_ms']:.1f} ms:")
    print(format_table(("package", "distribution", "modules", "self ms"),
                       [(g["package"], g["distribution"] or "-", g["modules"], f"{g['self_ms']:.1f}")
                        for g in imports["third_party"]]))
    print()
    active = [p["name"] for p in plugins if p.get("status") == "active"]
    print(f"plugins loaded: {', '.join(active) or 'none'}")
    if missing:
        print(f"workspace members NOT installed: {', '.join(missing)}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load > (os.cpu_count() or 1):
        print(f"note: the machine was busy (load {load:.1f} on {os.cpu_count()} CPUs), so wall times are "
              f"inflated; CPU medians are steadier")
    verdict = "PASS" if passed else "FAIL"
    ratio = UPSTREAM_MEDIAN_S / median
    print(f"target: {TARGET_COMMAND} median <= {TARGET_MEDIAN_S * 1000:.0f} ms with every workspace member "
          f"installed: {verdict} ({median * 1000:.1f} ms)")
    print(f"vs upstream CAO 2.5.4 ({UPSTREAM_MEDIAN_S * 1000:.0f} ms): {ratio:.2f}x "
          f"(upstream median / ours; above 1 is faster)")

    path = write_result("cli_help", {
        "benchmark": "cli_help",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "runs": args.runs,
        "warmup": args.warmup,
        "unit": "seconds",
        "results": results,
        "target": {"command": TARGET_COMMAND, "median_max_s": TARGET_MEDIAN_S, "pass": passed},
        "upstream_2_5_4": {"median_s": UPSTREAM_MEDIAN_S, "ratio": round(ratio, 2),
                           "note": "ratio = upstream median / ours (higher: faster)"},
        "members": versions,
        "plugins": [{"name": p["name"], "status": p["status"], "distribution": p["distribution"]}
                    for p in plugins],
        "imports": imports,
        "removed_from_env": [name for name in REMOVED_FROM_ENV if name in os.environ],
        "machine": machine(),
    }, args.output)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 1 if args.check and not passed else 0


if __name__ == "__main__":
    sys.exit(main())
