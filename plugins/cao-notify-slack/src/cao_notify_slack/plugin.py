"""Entry point of cao-notify-slack: ``plugin``, one ``SlackPlugin``, whose observers (from
``cao_notify_core.plugin``) only queue events. Kept thin: the service, the sender, httpx and yaml load
at start-up, and only when a webhook is configured.
"""

from __future__ import annotations

from cao_notify_core.plugin import NotifierPlugin


class SlackPlugin(NotifierPlugin):
    """Posts cao lifecycle events to a Slack incoming webhook (one instance per kernel)."""

    service_path = "cao_notify_slack.service:SERVICE"


#: What the ``notify_slack`` entry point loads.
plugin = SlackPlugin()
