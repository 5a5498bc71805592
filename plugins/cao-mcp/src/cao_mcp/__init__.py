"""cao-mcp: the MCP tools that let agents delegate to each other."""
