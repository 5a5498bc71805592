"""Entry point of cao-mcp (thin: the mcp SDK is imported only when a server runs)."""
