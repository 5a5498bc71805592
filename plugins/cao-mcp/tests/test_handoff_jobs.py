"""A handoff that runs longer than one MCP tool call may wait answers with a job id, and
``get_handoff_result`` reads its outcome later: over ``/mcp`` of a real ``cao server`` whose reply
budget is set short, with a mock worker that sleeps past it. The server is capped at two terminals,
so while that worker runs, an assign is refused with the cap's reason."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.tmux

JOB = re.compile(r"^[0-9a-f]{32}$")


async def test_a_long_handoff_answers_with_a_job_id_whose_result_is_read_later(own_server: Any,
                                                                                mcp: Any) -> None:
    server = own_server(CAO_MCP_HANDOFF_REPLY_AFTER="1", CAO_MAX_TERMINALS="2")
    async with server.client() as api:
        own = await mcp.agent(server, api)
        async with mcp.http(server.mcp_url, own, token=server.token, secret=server.secret(own)) as client:
            answer = await mcp.call(client, "handoff", {"agent_profile": "developer",
                                                        "message": "__mock_sleep_3"})
            assert not answer.error, answer.text
            pending = answer.data
            assert pending["success"] is False and pending["pending"] is True, pending
            job_id = pending["job_id"]
            assert JOB.match(job_id) and f"get_handoff_result tool, job_id={job_id}" in pending["message"]
            full = await mcp.call(client, "assign", {"agent_profile": "developer", "message": "lint it"})
            refusal = "Assignment failed: Terminal limit reached: 2 live terminal(s)"
            assert full.error and full.data["message"].startswith(refusal), full.text

            async def finished() -> Any:
                read = await mcp.call(client, "get_handoff_result", {"job_id": job_id})
                assert not read.error and read.data["success"] is True, read.text
                return read.data if read.data["state"] != "running" else None

            done = await mcp.wait_for(finished, 30)
            assert done["state"] == "completed" and "slept 3" in done["last_message"], done
            assert re.match(r"^[0-9a-f]{8}$", done["terminal_id"]) and done["error_message"] is None

            unknown = await mcp.call(client, "get_handoff_result", {"job_id": "0" * 32})
            assert unknown.error and "No handoff result found" in unknown.data["message"]
            bad = await mcp.call(client, "get_handoff_result", {"job_id": "../../x"})
            assert bad.error and "invalid job id" in bad.data["message"]
        # The job's own record, over HTTP, as upstream's route answers it.
        job = await api.get_handoff_result(job_id)
        assert job.state == "completed" and job.caller_id == own and job.agent_profile == "developer"
