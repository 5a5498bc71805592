"""The service-independent machinery of cao's webhook notifiers (cao-notify-discord, cao-notify-slack).

A library, not a plugin: it declares no entry point. A notifier describes its chat service in a
``service.Service`` (names, extra settings, payload rendering, how its 429s say how long to wait) and
subclasses ``plugin.NotifierPlugin``; this package does the rest:

- ``events``: the event kinds and the service-neutral ``Notice`` each hook call becomes;
- ``config``: settings from ``CAO_<SERVICE>_*`` or the ``notify.<service>`` section of the config file;
- ``sender``: the bounded queue and the background thread that posts, retries and drops;
- ``ratelimit``: reading ``Retry-After``;
- ``redact``: keeping the webhook URL out of reprs, errors and log records;
- ``notifier``: start-up and shut-down; ``plugin``: the observer plugin;
- ``text``: cutting text to a service's limits.

Its test helpers (a fake webhook, fixtures, strategies) are in cao's test kit, ``cao_testkit.notify``.

Nothing is imported here, so the entry-point module of a notifier stays cheap to import.
"""
