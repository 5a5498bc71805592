"""The provider record built from a launch module and a screen module."""

from __future__ import annotations

import types

from cao_hookspecs import LaunchPlan, ProviderCapabilities, StatusReport, TerminalStatus
from cao_launch_core.record import provider_spec


def _launch(ctx):
    return LaunchPlan(argv=["acme"])


def _detect(screen):
    return StatusReport(status=TerminalStatus.IDLE)


def _extract(text):
    return text


LAUNCH = types.SimpleNamespace(BINARY="acme", BINARY_ENV="CAO_ACME_BIN", INSTALL_HINT="pip install acme",
                               launch=_launch)
SCREEN = types.SimpleNamespace(detect_status=_detect, extract_last_message=_extract)


def test_the_modules_give_program_plan_and_readers():
    spec = provider_spec("acme", LAUNCH, SCREEN, description="Acme", exit_command="/quit",
                         capabilities=ProviderCapabilities(enter_count=2))
    assert (spec.name, spec.binary, spec.binary_env, spec.install_hint) == ("acme", "acme", "CAO_ACME_BIN",
                                                                           "pip install acme")
    assert spec.launch is _launch and spec.detect_status is _detect and spec.extract_last_message is _extract
    assert (spec.description, spec.exit_command, spec.capabilities.enter_count) == ("Acme", "/quit", 2)


def test_fields_left_out_keep_the_contracts_defaults():
    spec = provider_spec("acme", LAUNCH, SCREEN)
    assert spec.exit_command == "/exit" and spec.version_args == ("--version",)
    assert spec.startup_dialogs == () and spec.native_signal is None

