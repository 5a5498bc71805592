"""The layers hold (``lint-imports`` keeps every contract in ``[tool.importlinter]``), and the contracts
name every package of the workspace, so a new plugin is held to them from its first commit."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _settings() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def _contract(contract_id: str) -> dict:
    return next(c for c in _settings()["contracts"] if c["id"] == contract_id)


def _workspace_packages() -> dict[str, set[str]]:
    """Import packages by kind: ``libs``, ``plugins``, ``providers`` (from each member's wheel)."""
    found: dict[str, set[str]] = {}
    for kind in ("libs", "plugins", "providers"):
        for pyproject in ROOT.glob(f"{kind}/*/pyproject.toml"):
            if pyproject.parent.name.startswith(("_", ".")):
                continue
            wheel = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["hatch"]["build"]["targets"]["wheel"]
            found.setdefault(kind, set()).update(Path(p).name for p in wheel["packages"])
    return found


def test_lint_imports_keeps_every_contract():
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_contracts_name_every_package():
    packages = _workspace_packages()
    everything = set().union(*packages.values())
    runtime = everything - {"cao_testkit"}
    assert set(_settings()["root_packages"]) == everything | {"cao_hookspecs", "cao_kernel"}
    assert set(_contract("contract")["forbidden_modules"]) == everything | {"cao_kernel"}
    assert set(_contract("kernel")["forbidden_modules"]) == everything
    assert set(_contract("plugins")["source_modules"]) == runtime
    assert set(_contract("independence")["modules"]) == packages["plugins"] | packages["providers"]
