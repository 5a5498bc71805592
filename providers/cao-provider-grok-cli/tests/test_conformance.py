"""cao's conformance kit over the recorded screens (tests/screens/<version>/): statuses, answers,
and properties of the detector (never raises; a busy screen is never completed)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "grok_cli"
    provider_name = "grok_cli"
    screens_dir = Path(__file__).parent / "screens"
    # Grok never asks under cao: it runs with --always-approve, or dontAsk (launch.py refuses the rest).
    required_statuses = ("idle", "processing", "completed", "error")
    # Copied from the recorded processing screens: the spinner row and the footer of a running turn.
    busy_lines = (
        "    ⠙ Waiting for response… 0.2s                                                0.2s ⇣2.20k [stop]",
        "  Shift+Tab:mode  │  Ctrl+c:cancel  │  Ctrl+x:shortcuts",
    )
