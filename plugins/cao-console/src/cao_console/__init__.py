"""``cao console``: the team, live statuses and terminal screens in a terminal UI.

The ``console`` entry point loads ``cao_console.plugin:plugin``; the README lists the keys and settings.
"""
