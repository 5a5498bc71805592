"""The Launch page starts, grows, drives and stops a team; the catalogue page lists profiles, providers
and plugins."""

from __future__ import annotations

import pytest

from .conftest import api

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def screen(console, terminal_id):
    with api(console.server) as http:
        return http.get(f"/terminals/{terminal_id}/output").json()["output"]


def terminal_of(console, session, profile="developer"):
    with api(console.server) as http:
        rows = http.get(f"/sessions/{session}/terminals").json()
    return [t["id"] for t in rows if t["agent_profile"] == profile]


def test_launch_add_a_worker_send_input_and_stop_the_session(console):
    console.log_in("#/launch")
    page = console.page
    page.get_by_role("heading", name="Launch and stop").wait_for()
    start = page.get_by_role("form", name="Start a session")
    start.get_by_label("Profile").select_option("developer")
    start.get_by_label("Provider").select_option("mock_cli")
    start.get_by_label("Working directory").fill(str(console.server.workdir))
    start.get_by_label("Session name").fill("from-the-page")
    start.get_by_label("First message").fill("hello from the launch page")
    start.get_by_role("button", name="Start").click()
    start.get_by_role("status").get_by_text("Started").wait_for(timeout=30_000)
    (first,) = terminal_of(console, "cao-from-the-page")
    console.wait(lambda: "> MOCK: hello from the launch page" in screen(console, first), timeout=15,
               what="the first message answered")

    worker = page.get_by_role("form", name="Add a worker")
    worker.get_by_label("Session").select_option("cao-from-the-page")
    worker.get_by_label("Started by").select_option(first)
    worker.get_by_label("Profile").select_option("developer")
    worker.get_by_label("Provider").select_option("mock_cli")
    worker.get_by_role("button", name="Add worker").click()
    worker.get_by_role("status").get_by_text("Added").wait_for(timeout=30_000)
    second = next(t for t in terminal_of(console, "cao-from-the-page") if t != first)
    with api(console.server) as http:
        assert http.get(f"/terminals/{second}").json()["caller_id"] == first

    send = page.get_by_role("form", name="Send input")
    send.get_by_label("Terminal").select_option(second)
    send.get_by_label("Text").fill("a line for the worker")
    send.get_by_role("button", name="Send").click()
    send.get_by_role("status").get_by_text("Sent.").wait_for()
    console.screenshot("launch")
    console.wait(lambda: "> MOCK: a line for the worker" in screen(console, second), timeout=15,
               what="the input answered")

    console.open("#/team")
    page.locator(f'li.terminal[data-terminal-id="{first}"] li[data-terminal-id="{second}"]').wait_for()
    console.open("#/launch")
    stop = page.locator(".card", has=page.get_by_role("heading", name="Stop"))
    stop.get_by_label("Session").select_option("cao-from-the-page")
    stop.get_by_role("button", name="Stop session").click()
    dialog = page.get_by_role("dialog")
    assert "cao-from-the-page" in dialog.inner_text() and "2 terminals" in dialog.inner_text()
    dialog.get_by_role("button", name="Stop session").click()
    with api(console.server) as http:
        console.wait(lambda: http.get("/sessions/cao-from-the-page").status_code == 404, timeout=15,
                   what="the session gone")
    console.wait(lambda: "cao-from-the-page" not in stop.get_by_label("Session").inner_text(), timeout=10,
               what="the session gone from the page")


def test_a_refused_launch_says_why(console):
    console.log_in("#/launch")
    start = console.page.get_by_role("form", name="Start a session")
    start.get_by_label("Profile").select_option("developer")
    start.get_by_label("Provider").select_option("mock_cli")
    start.get_by_label("Working directory").fill("/no/such/folder")
    start.get_by_role("button", name="Start").click()
    start.get_by_role("alert").wait_for()
    assert "/no/such/folder" in start.get_by_role("alert").inner_text()


def test_profiles_providers_and_plugins_are_listed(console):
    console.log_in("#/catalog")
    page = console.page
    profiles = page.get_by_role("table", name="Installed agent profiles")
    profiles.get_by_role("cell", name="analysis_supervisor", exact=True).wait_for()
    assert profiles.get_by_role("cell", name="developer", exact=True).is_visible()
    providers = page.get_by_role("table", name="Providers (agent CLIs)")
    assert providers.get_by_role("row").filter(has_text="mock_cli").count() == 1
    plugins = page.get_by_role("table", name="Plugins of the server")
    plugins.get_by_role("cell", name="web", exact=True).wait_for()
    assert plugins.get_by_role("cell", name="cao-web").first.is_visible()
