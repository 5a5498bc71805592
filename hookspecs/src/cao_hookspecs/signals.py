"""The kernel's signal command as a provider receives it, the way ``ProviderSpec.native_signal`` promises.

When a provider sets ``native_signal``, the kernel puts ``CAO_SIGNAL_COMMAND`` into the launch context's
``env``: a JSON list, the program and its arguments (socket and terminal id already in them). The
provider writes that command into its CLI's hook configuration with an event name appended; when the
kernel's channel is off the variable is absent and the CLI gets no hooks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["SIGNAL_COMMAND_ENV", "signal_command"]

#: Where the kernel puts the signal command in the launch context's environment.
SIGNAL_COMMAND_ENV = "CAO_SIGNAL_COMMAND"


def signal_command(env: Mapping[str, str]) -> list[str] | None:
    """The kernel's signal command from a launch context's environment.

    :param env: the launch context's ``env``.
    :return: the program and its arguments, or None when the kernel offered no signal channel (the
        variable is absent or empty).
    :raises ValueError: when the variable is not a JSON list of non-empty strings (naming it and its
        value): a hook written from it could not run.
    """
    raw = env.get(SIGNAL_COMMAND_ENV)
    if not raw:
        return None
    try:
        command = json.loads(raw)
    except ValueError:
        command = None
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise ValueError(f"{SIGNAL_COMMAND_ENV} must be a JSON list of program and arguments, got {raw!r}")
    return command
