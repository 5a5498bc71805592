"""cao-server: the HTTP API over a cao kernel, its client, and the commands that talk to it.

Importing the package imports nothing else: ``cao --help`` must stay fast. Use ``cao_server.app``
(``create_app``), ``cao_server.client`` (``HttpKernel``, ``connect``) and ``cao_server.serve``.
"""

__version__ = "0.1.0"
