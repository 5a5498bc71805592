"""What cao's Kiro CLI and Amazon Q Developer CLI providers share: both CLIs read the same agent-file
format, take it by name from a folder under HOME, are started the same way and draw the same chat."""

from .cli import ChatCli

__all__ = ["ChatCli"]
