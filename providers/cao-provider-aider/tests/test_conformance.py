"""cao's conformance kit over the recorded screens (tests/screens/<version>/): statuses, answers,
start-up dialogs, and properties of the detector (never raises; a busy screen is never completed)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "aider"
    provider_name = "aider"
    screens_dir = Path(__file__).parent / "screens"
    # Copied from the recorded processing screen: Aider's spinner while the model has not answered.
    busy_lines = ("   ░█      Waiting for openai/scripted",)
