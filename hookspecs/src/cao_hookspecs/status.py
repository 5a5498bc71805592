"""Area 2: status detectors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import _hookspec

if TYPE_CHECKING:
    from .types import ProviderSpec, StatusReport, Terminal


@_hookspec(firstresult=True)
def cao_detect_status(terminal: Terminal, screen: str, provider: ProviderSpec) -> StatusReport | None:
    """Turn what a terminal shows into a status.

    Kind: lookup, ``firstresult=True``: stops at the first non-None result.

    Called by the kernel each time a terminal's screen changes (output is pushed, never polled).
    The kernel's own implementation is registered ``trylast`` and calls ``provider.detect_status``;
    a plugin overrides the detector of one provider by implementing this hook with ``tryfirst=True``
    and returning None for terminals it does not handle.

    :param terminal: the terminal whose screen changed (``terminal.provider`` names its provider).
    :param screen: the rendered screen text, one line per row, trailing blanks stripped.
    :param provider: the terminal's provider record.
    :return: a :class:`~cao_hookspecs.types.StatusReport`, or None to let the next detector decide.

    Errors: an exception is logged with the plugin's name and the reading is skipped (the status
    stays what it was); detectors should never raise.

    Stability: stable since 0.1.

    Example::

        @hookimpl(tryfirst=True)
        def cao_detect_status(terminal, screen):
            if terminal.provider == "my_cli" and "Thinking" in screen:
                return StatusReport(status="processing", evidence="Thinking banner")
    """
