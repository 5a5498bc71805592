"""Prompts on the pages: a mock worker that asks before each command, answered by a click, by someone
else, and too late; the Terminal page's audit trail."""

from __future__ import annotations

import pytest

from .conftest import api, start_session

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def task(console, terminal_id, command):
    with api(console.server) as http:
        sent = http.post(f"/terminals/{terminal_id}/input", json={"message": f"run: {command}"})
        assert sent.status_code == 200, sent.text


def last_answer(console, terminal_id):
    """The worker's last answer; '' while it has none (a turn still running answers an error)."""
    with api(console.server) as http:
        read = http.get(f"/terminals/{terminal_id}/output", params={"mode": "last"})
        return read.json()["output"] if read.status_code == 200 else ""


def open_prompt(console, terminal_id):
    with api(console.server) as http:
        return http.get(f"/terminals/{terminal_id}/prompt").json()["prompt"]


def test_a_prompt_shows_on_the_team_page_and_a_click_answers_it(console):
    console.log_in()
    page = console.page
    page.locator(".connection[data-state=live]").wait_for()
    agent = start_session(console.server, "careful", session_name="prompt-click")
    tid = agent["id"]
    task(console, tid, "make clean")
    row = page.locator(f'li.terminal[data-terminal-id="{tid}"]')
    card = row.locator(".prompt-card")
    card.wait_for()
    assert card.locator(".prompt-question").inner_text() == "Allow Bash(make clean)?"
    assert card.locator(".prompt-tool").inner_text().split() == ["Bash", "command:", "make", "clean"]
    options = card.get_by_role("button").filter(has_text=". ")
    assert options.all_inner_texts() == [
        "1. Yes default", "2. Yes, and don't ask again for Bash",
        "3. No, and tell the agent what to do differently \u270e"]
    assert "default" in (card.locator(".prompt-option").first.get_attribute("class") or "")
    assert card.get_by_role("button", name="1. Yes (default)").is_visible()

    # The option that takes text opens a field; the option and the text go in one answer.
    card.get_by_role("button", name="3. No, and tell the agent what to do differently (takes text)").click()
    field = card.get_by_role("textbox", name="text for option 3")
    field.fill("use git clean instead")
    field.press("Enter")
    refused = "Did not run make clean.\nReason: use git clean instead"
    console.wait(lambda: last_answer(console, tid) == refused, timeout=20, what="the worker's answer")
    card.wait_for(state="hidden")
    news = row.locator(".prompt-news")
    console.wait(lambda: news.inner_text().startswith(f"You answered prompt {tid}-1"), what="the news")
    assert "3. No, and tell the agent what to do differently with text \u201cuse git clean instead\u201d" in (
        news.inner_text())

    # The next prompt is answered elsewhere: the page drops it and says who answered.
    task(console, tid, "make test")
    card.wait_for()
    again = console.wait(lambda: open_prompt(console, tid), what="the second prompt")
    assert card.get_attribute("data-prompt-id") == again["id"]
    console.screenshot("prompt")
    with api(console.server) as http:
        answered = http.post(f"/terminals/{tid}/answer",
                             json={"option": 1, "prompt_id": again["id"], "by": "person:ops"})
        assert answered.status_code == 200, answered.text
    card.wait_for(state="hidden")
    console.wait(lambda: news.inner_text() == f"person:ops answered prompt {again['id']} "
                                              "(Allow Bash(make test)?): 1. Yes.", what="who answered")
    console.wait(lambda: last_answer(console, tid) == "Ran make test.",
                 timeout=20, what="the worker carrying on")
    assert row.locator(".note").inner_text() == ""
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")


def test_the_terminal_page_answers_and_lists_the_audit_trail(console):
    agent = start_session(console.server, "careful", session_name="prompt-trail")
    tid = agent["id"]
    console.log_in(f"#/terminal/{tid}")
    page = console.page
    page.locator(".connection[data-state=live]").wait_for()
    trail = page.get_by_role("region", name="prompt audit trail")
    assert trail.get_by_text("No prompts recorded for this terminal yet.").is_visible()
    task(console, tid, "make lint")
    card = page.locator(".prompt-card")
    card.wait_for()
    assert card.locator(".prompt-question").inner_text() == "Allow Bash(make lint)?"
    card.get_by_role("button", name="1. Yes (default)").click()
    console.wait(lambda: last_answer(console, tid) == "Ran make lint.", timeout=20, what="the first answer")
    card.wait_for(state="hidden")
    rows = trail.locator("tbody tr")
    console.wait(lambda: {"opened", "answered", "closed"} <= {
        r.get_attribute("data-kind") for r in rows.all()}, what="the trail, live")
    answered = trail.locator('tr[data-kind="answered"]')
    assert answered.locator("td").all_inner_texts()[1:] == ["answered", f"{tid}-1", "person:web", "1. Yes"]
    # A second prompt, with the first in the trail below the screen.
    task(console, tid, "make docs")
    card.wait_for()
    assert card.locator(".prompt-question").inner_text() == "Allow Bash(make docs)?"
    console.screenshot("terminal-prompt", full_page=True)
    card.get_by_role("button", name="2. Yes, and don't ask again for Bash").click()
    console.wait(lambda: last_answer(console, tid) == "Ran make docs.", timeout=20, what="the second answer")
    console.wait(lambda: trail.locator('tr[data-kind="answered"]').count() == 2, what="the second one listed")
    # Read again from the server, the trail is the same.
    live_kinds = [r.get_attribute("data-kind") for r in rows.all()]
    page.reload()
    page.locator(".connection[data-state=live]").wait_for()
    console.wait(lambda: [r.get_attribute("data-kind") for r in rows.all()] == live_kinds,
                 what="the trail read from the server")
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")


def test_an_answer_to_a_prompt_answered_meanwhile_is_refused_and_types_nothing(console):
    # The page's event stream is a stand-in that says "subscribed" and nothing more, so the page keeps
    # showing the prompt after it was answered elsewhere, as a page that has not heard yet would.
    console.page.route("**/events", lambda route: route.fulfill(
        status=200, headers={"content-type": "text/event-stream"},
        body='retry: 3600000\n\ndata: {"event":"subscribed","at":1}\n\n'))
    agent = start_session(console.server, "careful", session_name="prompt-stale")
    tid = agent["id"]
    task(console, tid, "make dist")
    opened = console.wait(lambda: open_prompt(console, tid), what="the prompt")
    console.log_in()
    page = console.page
    card = page.locator(f'li.terminal[data-terminal-id="{tid}"] .prompt-card')
    card.wait_for()
    with api(console.server) as http:
        answered = http.post(f"/terminals/{tid}/answer", json={"option": 1, "prompt_id": opened["id"]})
        assert answered.status_code == 200, answered.text
    console.wait(lambda: last_answer(console, tid) == "Ran make dist.", timeout=20, what="the answer")
    with api(console.server) as http:
        screen_before = http.get(f"/terminals/{tid}/output").json()["output"]

    card.get_by_role("button", name="2. Yes, and don't ask again for Bash").click()
    note = page.locator(f'li.terminal[data-terminal-id="{tid}"] .prompt-slot .note')
    console.wait(lambda: note.inner_text(), what="the refusal")
    assert note.inner_text().startswith(
        f"Not answered: prompt {opened['id']} is no longer open: terminal {tid} has no prompt to answer"), (
        note.inner_text())
    assert all(not b.is_disabled() for b in card.get_by_role("button").all())
    with api(console.server) as http:
        trail = http.get(f"/terminals/{tid}/prompts").json()
        assert [(e["kind"], e["by"]) for e in trail if e["kind"] == "answered"] == [("answered", "person")]
        page.wait_for_timeout(500)  # a key typed would show by now
        assert http.get(f"/terminals/{tid}/output").json()["output"] == screen_before
        assert http.get(f"/terminals/{tid}").json()["status"] == "completed"
        http.delete(f"/sessions/{agent['session_name']}")
