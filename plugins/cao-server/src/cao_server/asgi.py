"""Small ASGI pieces the server's middleware and its plugins' apps share."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import Message, Send


class StatusWatch:
    """An ASGI ``send`` that passes every message on and remembers the response's status (0 until the
    response starts)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status = 0

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self._send(message)


__all__ = ["StatusWatch"]
