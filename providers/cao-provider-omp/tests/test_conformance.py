"""cao's conformance kit over the recorded screens (tests/screens/<version>/): statuses, answers,
start-up dialogs, and properties of the detector (never raises; a busy screen is never completed)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "omp"
    provider_name = "omp"
    screens_dir = Path(__file__).parent / "screens"
    # Copied from the recorded processing screens.
    busy_lines = ("  ⎋ Working…",)
