"""cao commands that drive a running cao-server through the HTTP client."""
