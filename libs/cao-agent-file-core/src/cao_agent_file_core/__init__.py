"""What cao's Kiro CLI and Amazon Q Developer CLI providers share: both CLIs read the same agent-file
format, take it by name from a folder under HOME, and are started the same way."""

from .cli import ChatCli

__all__ = ["ChatCli"]
