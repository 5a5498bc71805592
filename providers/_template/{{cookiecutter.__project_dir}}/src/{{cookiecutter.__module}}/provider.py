"""The ``{{ cookiecutter.provider_name }}`` provider record: how cao launches {{ cookiecutter.display_name }}
and reads its screen and prompts."""

from __future__ import annotations

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .launch import model_endpoint
from .prompts import read_prompt
from .signals import native_answer, native_signal

__all__ = ["NAME", "TESTED_VERSIONS", "provider"]

NAME = "{{ cookiecutter.provider_name }}"
#: CLI versions whose screens are recorded under tests/screens/<version>/ (the conformance kit checks
#: that the two agree). TODO: the real CLI's versions; 0.1.0 is the stand-in program's.
TESTED_VERSIONS = ("0.1.0",)


def provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="{{ cookiecutter.display_name }}",
        # TODO: the command that makes the CLI quit.
        exit_command="/exit",
        # TODO: how the CLI takes a pasted message. One Enter right after the paste submits it here;
        # some CLIs need a second Enter or a short delay, some queue messages typed while busy.
        # native_status: False while the screen is all cao reads; True once the launch hooks the kernel's
        # signal command into the CLI (signals.py). takes_model: the launch passes --model.
        capabilities=ProviderCapabilities(accepts_input_while_busy=False, native_status=False, enter_count=1,
                                          submit_delay=0.0, uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        # The CLI's own turn events, mapped to statuses and answers (signals.py: stubs that say nothing
        # until the launch makes the CLI send them).
        native_signal=native_signal,
        native_answer=native_answer,
        # The text still at the prompt after cao typed a message: cao presses Enter again when its message
        # sits there unsent.
        pending_input=screen.pending_input,
        # The prompt a waiting screen shows, with each option's keys: cao shows it, answers it by option
        # and lets policies answer it.
        read_prompt=read_prompt,
    )
