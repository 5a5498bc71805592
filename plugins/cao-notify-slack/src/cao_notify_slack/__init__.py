"""Slack notifier for cao: posts lifecycle events to a Slack incoming webhook, off the kernel's event path.

The ``notify_slack`` entry point loads ``cao_notify_slack.plugin:plugin``; the README lists the
settings, the events and what the plugin guarantees.
"""
