"""cao's web console, served by cao-server at ``/``.

The ``web`` entry point loads ``cao_web.plugin:plugin``; the README lists the pages and how a browser
gets in.
"""
