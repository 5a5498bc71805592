"""cao-mcp: the MCP tools that let agents delegate to each other."""

__version__ = "0.1.0"
