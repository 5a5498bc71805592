"""Getting in: a login link opens the Team page; without one the page says how to get in and the API
answers 401; a used link opens nothing; the pages load nothing from elsewhere."""

from __future__ import annotations

import httpx
import pytest

from .conftest import api

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def test_a_login_link_opens_the_team_page(console):
    console.log_in()
    page = console.page
    page.get_by_role("heading", name="Team").wait_for()
    assert page.get_by_role("navigation", name="pages").is_visible()
    # The page reached the data (the session cookie stands for the token) and subscribed to events.
    page.locator(".connection[data-state=live]").wait_for()
    assert console.paths("/team") and console.paths("/events")
    assert page.context.cookies()[0]["sameSite"] == "Strict"
    # Everything came from the server itself: no CDN, no other origin.
    assert all(url.startswith(console.server.url) for url in console.requests), console.requests


def test_without_a_login_the_page_says_how_to_get_in_and_the_api_refuses(console):
    page = console.page
    page.goto(console.server.url + "/#/messages")
    page.get_by_role("heading", name="You are not logged in").wait_for()
    text = page.locator("main").inner_text()
    assert "cao console --web" in text and "cao server" in text
    assert page.locator("header.top").is_hidden()
    console.screenshot("login")
    answer = page.request.get(console.server.url + "/team")
    assert answer.status == 401
    with httpx.Client(base_url=console.server.url, trust_env=False) as anonymous:
        assert anonymous.get("/sessions").status_code == 401


def test_a_used_login_link_opens_nothing(console, browser):
    with api(console.server) as http:
        url = http.post("/login-links").json()["url"]
    console.page.goto(url)
    console.page.get_by_role("heading", name="Team").wait_for()
    other = browser.new_context()
    try:
        again = other.new_page()
        answered = again.goto(url)
        assert answered is not None and answered.status == 401
        assert "cao console --web" in again.locator("body").inner_text()
        again.goto(console.server.url + "/")
        again.get_by_role("heading", name="You are not logged in").wait_for()
    finally:
        other.close()


def test_a_page_without_the_csrf_header_cannot_change_anything(console):
    console.log_in()
    # What a page of another origin on the same host could do with the cookie: no X-CAO-CSRF header.
    forged = console.page.evaluate("""async () => {
        const answer = await fetch('/sessions', {method: 'POST',
            headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({agent_profile: 'developer'})});
        return answer.status;
    }""")
    assert forged == 403
