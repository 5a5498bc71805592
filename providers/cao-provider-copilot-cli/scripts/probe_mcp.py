"""A one-tool MCP server (stdio) the recording script gives Copilot CLI, to show an MCP tool call."""

from __future__ import annotations


def main() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("probe")

    @server.tool()
    def ping(text: str) -> str:
        """Answer with the text sent."""
        return f"pong: {text}"

    server.run()


if __name__ == "__main__":
    main()
