"""cao's conformance kit over the recorded screens (tests/screens/<version>/): statuses, answers,
prompts, and properties of the detector (never raises; a busy screen is never completed)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "qwen_code"
    provider_name = "qwen_code"
    screens_dir = Path(__file__).parent / "screens"
    # Copied from the recorded processing screens (the words change every turn; the timer stays).
    busy_lines = ("  .. Enhancing... Enhancing... Still loading. (0s · esc to cancel)",)
