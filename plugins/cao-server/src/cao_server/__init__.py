"""cao-server: the HTTP API over a cao kernel, its client, and the commands that talk to it."""
