"""Small ASGI pieces the server's middleware and its plugins' apps share."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    """A request body over the limit: declared so up front, or grown past it while arriving."""


class ClientLeft(Exception):
    """The client disconnected before its request body ended."""


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, refused as soon as it is known to pass ``limit`` bytes.

    A ``Content-Length`` over the limit is refused before a byte is read; a chunked body is cut off at
    the chunk that passes it. Raises ``BodyTooLarge`` or ``ClientLeft``.
    """
    for key, value in scope.get("headers") or ():
        if key.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            raise BodyTooLarge(f"request body is {int(value)} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientLeft
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body is over the limit of {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


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


__all__ = ["BodyTooLarge", "ClientLeft", "StatusWatch", "read_body"]
