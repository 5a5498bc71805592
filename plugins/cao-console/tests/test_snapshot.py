"""The main screen, drawn from a fixed team, compared with ``golden/main-screen.svg``.

The comparison is of Textual's own SVG export, so any change in what is drawn (layout, colours, a
label, the escaping of a message body) shows up as a failure, with the new picture written next to
the test's temporary files to look at. When a change is meant, refresh the golden file:

    CAO_UPDATE_SNAPSHOTS=1 uv run pytest plugins/cao-console/tests/test_snapshot.py

and look at the new ``golden/main-screen.svg`` (any browser shows it) before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "main-screen.svg"
# Read when the module is imported: every test runs with cao's variables cleared.
UPDATE = os.environ.get("CAO_UPDATE_SNAPSHOTS") == "1"


def test_main_screen_matches_the_golden_file(fake: Any, helpers: Any, utc: None, tmp_path: Path):
    from textual import constants

    from cao_console.app import ConsoleApp

    # Textual's import-time settings that change the picture, as the conftest left them.
    assert constants.DEFAULT_THEME == "textual-dark" and constants.TEXTUAL_ANIMATIONS == "none"
    server = fake()
    app = ConsoleApp(server, team=server.snapshots[0])

    async def scenario(pilot: Any) -> str:
        await helpers.until(pilot, lambda: ("screen", "a1b2c3d4") in server.calls, "the first screen")
        await pilot.press("down")  # the developer: waiting for an answer, two messages pending
        await helpers.until(pilot, lambda: "from user" in helpers.plain(app, "#details"), "its messages")
        await helpers.until(pilot, lambda: "42 passed" in helpers.plain(app, "#screen"), "its screen")
        await helpers.until(pilot, lambda: "live" in helpers.plain(app, "#state"), "the event stream")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        return app.export_screenshot(title="cao console")

    svg = helpers.drive(app, scenario)
    if UPDATE:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(svg, encoding="utf-8")
    seen = tmp_path / "main-screen.svg"
    seen.write_text(svg, encoding="utf-8")
    assert GOLDEN.exists(), f"no golden file yet; write it with CAO_UPDATE_SNAPSHOTS=1 (see {seen})"
    assert svg == GOLDEN.read_text(encoding="utf-8"), (
        f"the main screen changed: compare {seen} with {GOLDEN}; if the change is meant, refresh the golden "
        "file as this module's docstring says")
