"""The conformance kit over every recorded OpenCode screen (cao_kernel.testing.conformance)."""

from __future__ import annotations

from pathlib import Path

from cao_kernel.testing.conformance import ProviderConformance


class TestConformance(ProviderConformance):
    entry_point = "opencode_cli"
    provider_name = "opencode_cli"
    screens_dir = Path(__file__).parent / "screens"
    # Footer rows of recorded processing screens: the spinner and "esc interrupt" (220 and 100 columns).
    busy_lines = (
        " BUILD  ⬝⬝■■■■■■ esc interrupt" + " " * 159 + "8.2K (1%) · $0.02 · ctrl+p cmd",
        " BUILD  ■■■■⬝⬝⬝⬝ esc interrupt" + " " * 59 + "ctrl+p cmd",
    )
