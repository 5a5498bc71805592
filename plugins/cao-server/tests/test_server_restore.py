"""``POST /terminals/{terminal_id}/restore`` on a real server: answers checked against the OpenAPI
document."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.tmux


def test_restore_answers_201_with_the_new_terminal_and_names_each_error(api: Any, make_terminal: Any,
                                                                         poll: Any) -> None:
    old = make_terminal(session="rest")
    assert api.delete(f"/terminals/{old['id']}").status_code == 200
    response = api.post(f"/terminals/{old['id']}/restore")
    assert response.status_code == 201, response.text
    new = response.json()
    assert new["id"] != old["id"]
    assert (new["session_name"], new["agent_profile"], new["provider"], new["working_directory"]) == (
        old["session_name"], old["agent_profile"], old["provider"], old["working_directory"])

    running = api.post(f"/terminals/{new['id']}/restore")
    assert running.status_code == 409 and "still running" in running.json()["detail"]
    unknown = api.post("/terminals/abcdef12/restore")
    assert unknown.status_code == 404 and "no saved screen log" in unknown.json()["detail"]
    assert api.post("/terminals/NOT-AN-ID/restore").status_code == 422
    assert api.delete("/sessions/cao-rest").status_code == 200
