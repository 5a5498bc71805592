"""Discord notifier for cao: posts lifecycle events to a Discord webhook, off the kernel's event path.

The ``notify_discord`` entry point loads ``cao_notify_discord.plugin:plugin``; the README lists the
settings, the events and what the plugin guarantees.
"""
