"""Area 3: message delivery."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .markers import _hookspec

if TYPE_CHECKING:
    from .protocols import TerminalBackend
    from .types import DeliveryReceipt, InboxStoreSpec, Message, ProviderSpec, Terminal


@_hookspec
def cao_register_inbox_stores() -> Iterable[InboxStoreSpec]:
    """Register places where inbox messages wait.

    Kind: registration (broadcast).

    :return: an iterable of :class:`~cao_hookspecs.types.InboxStoreSpec`.

    The kernel uses the store named by the ``CAO_INBOX_STORE`` setting, else ``sqlite`` when it is
    registered, else its built-in ``memory`` store. Duplicate names are reported naming both plugins.

    Errors: an implementation that raises is reported with its plugin's name and contributes nothing.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_register_inbox_stores():
            return [InboxStoreSpec(name="redis", factory=lambda ctx: RedisInbox(ctx.settings))]
    """


@_hookspec(firstresult=True)
def cao_deliver_message(
    terminal: Terminal, message: Message, provider: ProviderSpec, backend: TerminalBackend
) -> DeliveryReceipt | None:
    """Type one inbox message into its receiver.

    Kind: lookup, ``firstresult=True``: stops at the first non-None result.

    Called from a worker thread (it may block) once the delivery engine has claimed ``message`` for
    ``terminal`` because the terminal is ready. The kernel's implementation (``trylast``) pastes the
    body through ``backend.send_text`` using the provider's Enter count and submit delay, with the
    message id as the input's ``mark``: a kernel that starts after a crash reads the mark back
    (``backend.input_mark``) to tell whether the message went in. An implementation that types the
    message itself passes ``mark=str(message.id)`` too; without it, a delivery cut short by a crash is
    typed again.

    :param terminal: the receiver.
    :param message: the claimed message (state ``delivering``).
    :param provider: the receiver's provider record.
    :param backend: the receiver's terminal backend.
    :return: a :class:`~cao_hookspecs.types.DeliveryReceipt`, or None to let the next implementation
        deliver it.

    Errors: raising marks the attempt failed with the exception's text; the engine retries with
    backoff and dead-letters the message after its last try, telling the sender.

    Stability: stable since 0.1.

    Example::

        @hookimpl(tryfirst=True)
        def cao_deliver_message(terminal, message, backend):
            if terminal.provider == "my_cli":
                backend.send_keys(terminal.id, ["Escape"])  # leave a menu first
            return None
    """
