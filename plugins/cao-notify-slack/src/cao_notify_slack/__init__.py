"""Slack notifier for cao."""
