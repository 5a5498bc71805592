"""How much may wait in one terminal's inbox.

A sender that queues faster than its receiver reads (an agent in a loop, a script) would otherwise
grow the inbox store without bound: each message may be 1 MiB and is kept until it is delivered.
``send_message`` refuses a message for a terminal that already has ``CAO_INBOX_MAX_PENDING`` messages
waiting, or that it would bring past ``CAO_INBOX_MAX_PENDING_BYTES`` of waiting text (pending ones,
those waiting for a retry included). The refusal is a ``Conflict`` (409) that names the setting; 0 turns
a cap off. Notices cao queues itself (a worker stopped, a message died) are not capped: they are few
and short, and refusing one would hide a failure from the agent it is meant for.

The check reads what waits, so it costs at most what the caps allow; senders racing at the cap may pass
it by one message each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cao_hookspecs.setting_values import non_negative

from .errors import Conflict

if TYPE_CHECKING:
    from cao_hookspecs import Message

__all__ = ["DEFAULT_MAX_PENDING", "DEFAULT_MAX_PENDING_BYTES", "PendingCap"]

DEFAULT_MAX_PENDING = 100
# Sixteen messages of the largest size: far more than an agent reads before it acts on them.
DEFAULT_MAX_PENDING_BYTES = 16 * 1024 * 1024
_UNLIMITED = 2**62


@attrs.frozen
class PendingCap:
    """The caps on one terminal's waiting messages; 0 is no cap."""

    messages: int = DEFAULT_MAX_PENDING
    bytes: int = DEFAULT_MAX_PENDING_BYTES

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> PendingCap:
        messages = non_negative(settings, "CAO_INBOX_MAX_PENDING", DEFAULT_MAX_PENDING,
                                what="a whole number of messages", zero="no limit", whole=True)
        size = non_negative(settings, "CAO_INBOX_MAX_PENDING_BYTES", DEFAULT_MAX_PENDING_BYTES,
                            what="a whole number of bytes", zero="no limit", whole=True)
        return cls(messages=int(messages), bytes=int(size))

    @property
    def active(self) -> bool:
        return bool(self.messages or self.bytes)

    @property
    def list_limit(self) -> int:
        """How many waiting messages the check needs to see."""
        return self.messages or _UNLIMITED

    def check(self, receiver_id: str, waiting: Sequence[Message], body: str) -> None:
        """Raise ``Conflict`` when ``body`` may not join ``waiting`` (the receiver's pending messages)."""
        if self.messages and len(waiting) >= self.messages:
            raise Conflict(
                f"terminal {receiver_id} already has {len(waiting)} messages waiting, the most "
                f"CAO_INBOX_MAX_PENDING={self.messages} allows; send again once it has read some")
        if self.bytes:
            size = len(body.encode("utf-8", "surrogatepass"))
            size += sum(len(m.body.encode("utf-8", "surrogatepass")) for m in waiting)
            if size > self.bytes:
                raise Conflict(
                    f"this message would bring the text waiting for terminal {receiver_id} to {size} bytes, "
                    f"over CAO_INBOX_MAX_PENDING_BYTES={self.bytes}; send again once it has read some")
