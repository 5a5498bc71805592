"""The example runner: a private cao-server, the example's profiles, its supervisor, and a live view.

Used by ``examples/run_example.py`` and by ``scripts/demo``; see ``examples/README.md``.
"""
