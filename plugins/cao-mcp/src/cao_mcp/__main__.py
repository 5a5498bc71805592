"""``python -m cao_mcp``: the ``cao-mcp-server`` script, for an installation without its console script."""

from .script import main

main()
