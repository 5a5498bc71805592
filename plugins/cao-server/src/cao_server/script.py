"""The ``cao-server`` script: ``cao server`` under its own name.

cao-server depends on the contract only, so it does not import the kernel: the ``cao`` command line is
found through installed metadata (``cao_hookspecs.cli.run_cao``), and when none is installed the
script says what to install instead of failing on an import.
"""

from __future__ import annotations

import sys

from cao_hookspecs.cli import missing_cao, run_cao

MISSING = missing_cao("cao-server")


def main() -> None:
    run_cao(["server", *sys.argv[1:]], prog_name="cao-server")
