"""What cao's providers share to start their agent CLIs: the environment a CLI runs with, the JSON of
its MCP config, a private config folder built from the user's own, and the provider record around its
launch and screen modules."""
