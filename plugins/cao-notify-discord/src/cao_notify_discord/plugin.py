"""Entry point of cao-notify-discord: ``plugin``, one ``DiscordPlugin``, whose observers (from
``cao_notify_core.plugin``) only queue events. Kept thin: the service, the sender, httpx and yaml load
at start-up, and only when a webhook is configured.
"""

from __future__ import annotations

from cao_notify_core.plugin import NotifierPlugin


class DiscordPlugin(NotifierPlugin):
    """Posts cao lifecycle events to a Discord webhook (one instance per kernel)."""

    service_path = "cao_notify_discord.service:SERVICE"


#: What the ``notify_discord`` entry point loads.
plugin = DiscordPlugin()
