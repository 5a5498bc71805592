"""Native status from {{ cookiecutter.display_name }}'s own turn events, ahead of its screen.

The kernel passes a signal command to every terminal of a provider that sets ``native_signal``
(``cao_hookspecs.signals.signal_command(ctx.env)`` reads it in ``launch``). A CLI that can run a
program when a turn starts or ends (hooks, a notify setting, an extension) runs that command with the
event's name appended (and ``--stdin`` before it when the CLI passes its JSON on standard input); the
kernel then calls :func:`native_signal` with the event and the JSON's top-level scalars, and trusts
the status it returns over the screen.

The stand-in program runs no hooks, so both functions say nothing and the screen decides everything.

TODO (real CLI), when it can run a program at points of its turn:

1. In ``launch.py``, write the signal command into the CLI's hook configuration (a file in
   ``LaunchPlan.files``, a flag), one hook per event mapped below; write none when ``signal_command``
   gives None (the kernel's channel is off).
2. Map the events in :func:`native_signal`: a prompt submitted → ``processing``; the turn ended →
   ``completed``; an API error ended it → ``error`` (with what the API said as evidence); a question
   for the user → ``waiting_user_answer``. Map only events that are exact: a turn end reported for a
   side thread makes cao call a running agent finished. Return None for everything else; never raise.
3. If the turn-end event carries the model's answer (a ``last_assistant_message``), return it from
   :func:`native_answer`: a handoff then gets the model's own text without reading the screen.
4. Set ``native_status=True`` in ``provider.py``'s capabilities, and test the mapping in
   ``tests/test_signals.py`` with payloads copied from what the CLI really sends.

``docs/writing-providers.md`` (Native signals) says what the kernel does with each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cao_hookspecs import StatusReport

__all__ = ["native_answer", "native_signal"]


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one event of the CLI means, or None when it says nothing about it.

    TODO (real CLI): map its events (see the module docstring); the stand-in sends none.
    """
    return None


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer a turn-ending event carries (the model's own text, not its drawing on the screen);
    None for other events or when it is absent.

    TODO (real CLI): read it from the turn-end event's payload, if the CLI sends one.
    """
    return None
