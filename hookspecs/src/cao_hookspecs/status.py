"""Area 2: status detectors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import _hookspec

if TYPE_CHECKING:
    from .prompts import Prompt
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


@_hookspec(firstresult=True)
def cao_read_prompt(terminal: Terminal, screen: str, provider: ProviderSpec) -> Prompt | None:
    """Read the prompt a waiting terminal shows into a typed record.

    Kind: lookup, ``firstresult=True``: stops at the first non-None result.

    Called by the kernel when a reading of the terminal's screen is ``waiting_user_answer`` and the
    detector gave no ``StatusReport.prompt``, and again just before an answer is typed (to refuse a stale
    one). The kernel's own implementation is registered ``trylast`` and calls ``provider.read_prompt``; a
    plugin reads the prompts of one CLI better by implementing this hook with ``tryfirst=True`` and
    returning None for terminals it does not handle.

    :param terminal: the waiting terminal.
    :param screen: the rendered screen text, one line per row, trailing blanks stripped.
    :param provider: the terminal's provider record.
    :return: a :class:`~cao_hookspecs.prompts.Prompt` whose options carry the keys that pick them from
        this screen, or None to let the next reader decide (when none can, the terminal waits with no
        typed prompt: answers are typed as text, as upstream does).

    Errors: an exception is logged with the plugin's name and the next reader is asked; readers should
    never raise.

    Stability: provisional since 0.2.

    Example::

        @hookimpl(tryfirst=True)
        def cao_read_prompt(terminal, screen):
            if terminal.provider == "my_cli" and "Proceed? [y/n]" in screen:
                return Prompt(kind="confirmation", question="Proceed?", options=[
                    PromptOption(label="yes", keys=["y"], effect="allow"),
                    PromptOption(label="no", keys=["n"], effect="deny")])
    """
