"""The kernel's own hook implementations, registered ``trylast`` so any plugin can override them."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from cao_hookspecs import hookimpl

#: The kernel's own inbox store: in-process, used when no durable one is installed.
MEMORY_STORE = "memory"

if TYPE_CHECKING:
    from cao_hookspecs import (
        DeliveryReceipt,
        InboxStoreSpec,
        Message,
        Prompt,
        ProviderSpec,
        StatusReport,
        Terminal,
        TerminalBackend,
    )


@hookimpl(trylast=True)
def cao_detect_status(terminal: Terminal, screen: str, provider: ProviderSpec) -> StatusReport:
    return provider.detect_status(screen)


@hookimpl(trylast=True)
def cao_read_prompt(terminal: Terminal, screen: str, provider: ProviderSpec) -> Prompt | None:
    return provider.read_prompt(screen) if provider.read_prompt is not None else None


@hookimpl(trylast=True)
def cao_deliver_message(
    terminal: Terminal, message: Message, provider: ProviderSpec, backend: TerminalBackend
) -> DeliveryReceipt:
    from cao_hookspecs import DeliveryReceipt

    caps = provider.capabilities
    # The mark lets a later kernel tell, after a crash, whether this input went in (DeliveryEngine.recover).
    backend.send_text(terminal.id, message.body, enter_count=caps.enter_count, submit_delay=caps.submit_delay,
                      mark=str(message.id))
    return DeliveryReceipt(message_id=message.id, terminal_id=terminal.id, delivered_at=time.time(), method="paste")


@hookimpl
def cao_register_inbox_stores() -> list[InboxStoreSpec]:
    from cao_hookspecs import InboxStoreSpec

    def memory(ctx: object) -> object:
        from .inbox_memory import MemoryInboxStore

        return MemoryInboxStore()

    return [InboxStoreSpec(name=MEMORY_STORE, factory=memory, description="in-process, lost on exit")]
