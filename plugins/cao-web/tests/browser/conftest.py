"""The console in a real browser: Debian's chromium driven by Playwright's sync API, against a real
``cao server`` subprocess (its own home and tmux server) loading the web plugin and mock agents.

One browser and one server per test module; each test gets a fresh browser context (no cookies) and
logs in, or not, itself. The server runs in its own process, outside any event loop of the test, as
Playwright's sync API requires. ``CAO_DOC_SCREENSHOTS=1`` makes the tests that show a page at its best
write ``docs/images/console-<name>.png`` for docs/console.md.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[4]
CHROMIUM = "/usr/bin/chromium"
PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp", "web")
ASSIGN = ROOT / "examples" / "assign"
# A mock agent that asks before each command its task names (`run: <command>`): a real prompt to answer.
CAREFUL = """---
name: careful
description: Asks before it runs a command
mockBehaviour: permission
---
You ask before you run anything.
"""
WARM = """---
name: warm_helper
description: Kept started ahead, one at a time
provider: mock_cli
pool:
  size: 1
---
You help.
"""
# Flags for a headless chromium in a container: no GPU, no network features nobody uses here.
CHROMIUM_ARGS = ["--disable-gpu", "--disable-quic", "--disable-sync", "--disable-extensions"]
# Read at import: each test runs with every CAO_* variable of the shell removed.
SCREENSHOTS = os.environ.get("CAO_DOC_SCREENSHOTS") == "1"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium. Missing: skipped on a developer's machine, a failure in CI (bootstrap
    installs it there, so its absence is a broken set-up, not a reason to test less)."""
    path = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (bash scripts/bootstrap.sh installs it)")
        pytest.skip("chromium is not installed (bash scripts/bootstrap.sh installs it)")
    return path


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def console_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A ``cao server`` with the web console, the assign example's profiles and its mock behaviours, and
    ``careful``, a mock agent that asks permission."""
    from cao_testkit.server_process import server_env, start_cao_server
    from cao_testkit.tmux import private_tmux_socket

    folder = tmp_path_factory.mktemp("console")
    home = folder / "home"
    (home / "agent-store").mkdir(parents=True)
    # The agents' folder shows on the pages (and in the screenshots of docs/console.md): a short one.
    work = Path(tempfile.mkdtemp(prefix="cao-console-")) / "project"
    work.mkdir()
    for profile in ASSIGN.glob("*.md"):
        if profile.name != "README.md":
            shutil.copy(profile, home / "agent-store" / profile.name)
    (home / "agent-store" / "careful.md").write_text(CAREFUL, encoding="utf-8")
    (home / "agent-store" / "warm_helper.md").write_text(WARM, encoding="utf-8")
    with private_tmux_socket() as tmux:
        env = server_env(home, tmux, PLUGINS)
        # The mock agents import the example's behaviours from the repository.
        env["CAO_MOCK_BEHAVIOUR_PATH"] = str(ROOT)
        server = start_cao_server(home, work, env)
        server.workdir = work  # type: ignore[attr-defined]
        server.tmux = tmux  # type: ignore[attr-defined]
        try:
            yield server
        finally:
            server.close()
            shutil.rmtree(work.parent, ignore_errors=True)


class Console:
    """One browser context's page on the console, with what it saw: every request path it made,
    every dialog (none may open), and every uncaught script error (none may happen)."""

    def __init__(self, context: Any, server: Any) -> None:
        self.context = context
        self.server = server
        self.page = context.new_page()
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

        def dialog(opened: Any) -> None:
            self.dialogs.append(opened.message)
            opened.dismiss()

        self.page.on("dialog", dialog)

    def wait(self, predicate: Any, timeout: float = 10.0, what: str = "") -> Any:
        """``predicate()`` once it is truthy, looking every 25 ms; fail after ``timeout`` seconds. The
        pause is Playwright's own: its events (requests, socket frames) are taken only while the test
        is inside a Playwright call, so a plain sleep would never see them."""
        deadline = time.monotonic() + timeout
        while not (value := predicate()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what or 'the condition'}: not within {timeout:g} s")
            self.page.wait_for_timeout(25)
        return value

    def paths(self, path: str) -> list[str]:
        """The requests whose path is ``path`` (with any query)."""
        base = self.server.url
        return [u for u in self.requests if u.startswith(base) and u[len(base):].split("?")[0] == path]

    def log_in(self, route: str = "#/team") -> None:
        """Ask for a login link with the token, as ``cao console --web`` does, and follow it."""
        with api(self.server) as http:
            link = http.post("/login-links")
        assert link.status_code == 201, link.text
        self.page.goto(link.json()["url"])
        self.page.wait_for_url(f"{self.server.url}/")
        if route != "#/team":
            self.open(route)
        self.page.locator("h1").first.wait_for()

    def open(self, route: str) -> None:
        self.page.evaluate("route => { location.hash = route; }", route)

    def screenshot(self, name: str, *, full_page: bool = False) -> None:
        if SCREENSHOTS:
            target = ROOT / "docs" / "images" / f"console-{name}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(target), animations="disabled", caret="hide", full_page=full_page)


@pytest.fixture
def console(browser: Any, console_server: Any) -> Iterator[Console]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    context.set_default_timeout(20_000)
    opened = Console(context, console_server)
    try:
        yield opened
    finally:
        context.close()
    assert opened.errors == [], f"uncaught script errors on the page: {opened.errors}"
    assert opened.dialogs == [], f"the page opened dialogs: {opened.dialogs}"


def api(server: Any) -> httpx.Client:
    """An HTTP client of ``server`` with the owner's token (what the test does behind the page's back)."""
    return httpx.Client(base_url=server.url, headers=server.headers, trust_env=False, timeout=60)


def start_session(server: Any, profile: str = "developer", **fields: Any) -> dict[str, Any]:
    """A new session of one mock agent, ready for input."""
    with api(server) as http:
        created = http.post("/sessions", json={"agent_profile": profile, "provider": "mock_cli",
                                               "working_directory": str(server.workdir), **fields})
        assert created.status_code == 201, created.text
        return created.json()
