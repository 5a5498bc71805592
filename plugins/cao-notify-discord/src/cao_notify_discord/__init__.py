"""Discord notifier for cao."""
