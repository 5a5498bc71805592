"""Test helpers for webhook notifiers built on cao-notify-core (cao-notify-discord, cao-notify-slack, yours).

- :mod:`.webhook`: ``FakeWebhook``, a real HTTP server on 127.0.0.1 that plays a webhook from a script of
  ``Reply`` objects and records every post; :mod:`.discord` and :mod:`.slack` give it each service's shape.
- :mod:`.examples`: one observer call per event kind, and the notice each becomes.
- :mod:`.fixtures`: pytest fixtures (``webhook``, ``start_plugin``, ``config_file``, ``until``) for the
  notifier a ``notify_target`` fixture names.
- :mod:`.strategies`: hypothesis strategies for payload tests.
"""
