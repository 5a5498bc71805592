"""A live check that an agent CLI's model can call cao's ``send_message`` over MCP.

A provider's ``tests/test_live_mcp.py`` calls it with the fixtures its conftest gives: ``cao_server`` (a
real ``cao server``, see :mod:`cao_testkit.server_process`, loading the provider and ``mock_cli``), the
scripted ``model_server`` the CLI talks to, and ``workdir``::

    from cao_testkit.live_mcp import check_send_message_over_mcp

    async def test_send_message_called_by_my_cli_lands_in_the_receivers_inbox(cao_server, model_server,
                                                                              workdir):
        sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="my_cli",
                                                 tool="cao-mcp-server_send_message")
        # Then what only this CLI promises, read from what the check returns:
        assert sent.tool in sent.first.conversation.tools

Two profiles go into the server's agent store: ``sender``, of the provider, with ``cao-mcp-server`` among
its MCP servers, and ``receiver``, a ``mock_cli`` agent. The model is scripted to call ``tool`` (the name
under which this CLI offers cao's ``send_message``) with the receiver's id, then to answer with what the
tool said. The check fails unless the sender's turn completes after exactly those two requests, the tool
result it passed back is a success, the message lands in the receiver's inbox signed by the sender, the
mock receiver gets it typed in and answers it, and the sender's last message is the scripted answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from cao_hookspecs import CreateTerminalRequest

from .waiting import eventually
from .models.script import call_tool, reply, respond

if TYPE_CHECKING:
    from cao_hookspecs import Message, Terminal

    from .models.script import Conversation, RecordedRequest, ScriptedServer, ToolResult
    from .server_process import CaoServer

__all__ = ["ANSWER_PREFIX", "MESSAGE", "RECEIVER", "SENDER", "SentOverMcp", "check_send_message_over_mcp"]

SENDER = "sender"
RECEIVER = "receiver"
MESSAGE = "Build is green; please review."
#: How the scripted model's final answer starts; the rest is the start of the tool's text.
ANSWER_PREFIX = "Message sent. Tool said: "


@attrs.frozen
class SentOverMcp:
    """What the check saw, for the assertions only one CLI can make.

    ``first`` and ``second`` are the model requests of the sender's turn (the second carries ``result``,
    the tool result the CLI passed back); ``payload`` is that result's JSON as ``parse`` read it;
    ``inbox`` is the receiver's inbox, read after the receiver answered; ``last`` is the sender's last
    message.
    """

    tool: str
    sender: Terminal
    receiver: Terminal
    first: RecordedRequest
    second: RecordedRequest
    result: ToolResult
    payload: Any
    inbox: list[Message]
    last: str


def _last_messages(body: Any) -> str:
    """The tail of a request body's conversation, whichever field its API keeps it in, for a failure."""
    if isinstance(body, dict):
        for field in ("messages", "input", "contents"):
            if isinstance(body.get(field), list):
                return json.dumps(body[field][-3:], default=str)[:3000]
    return json.dumps(body, default=str)[:3000]


def _tool_said(conversation: Conversation) -> Any:
    result = conversation.last_tool_result
    return reply(ANSWER_PREFIX + (result.output[:80] if result is not None else "(no tool result)"))


def _profiles(provider: str, mcp_server: str, fields: Mapping[str, Any]) -> dict[str, str]:
    from cao_hookspecs import AgentProfile
    from cao_kernel.profiles.parse import serialize_profile

    sender = AgentProfile(
        name=SENDER, description=f"A {provider} agent with cao's tools", provider=provider,
        mcp_servers={mcp_server: {"type": "stdio", "command": "cao-mcp-server", "args": []}},
        system_prompt="You coordinate with other agents through cao.", **fields,
    )
    receiver = AgentProfile(name=RECEIVER, description="A mock agent that receives messages",
                            provider="mock_cli", system_prompt="You receive messages.")
    return {p.name: serialize_profile(p) for p in (sender, receiver)}


async def check_send_message_over_mcp(
    cao_server: CaoServer,
    model_server: ScriptedServer,
    workdir: str,
    *,
    provider: str,
    tool: str,
    mcp_server: str = "cao-mcp-server",
    profile_fields: Mapping[str, Any] | None = None,
    parse: Callable[[str], Any] = json.loads,
    busy_within: float | None = None,
    timeout: float = 60.0,
) -> SentOverMcp:
    """Have the real CLI of ``provider`` call ``tool`` (cao's ``send_message``) and check it went through.

    :param mcp_server: the name the sender's profile gives cao's MCP server (CLIs build tool names on it).
    :param profile_fields: more ``AgentProfile`` fields for the sender (such as a ``model`` the CLI needs).
    :param parse: reads the tool's text into its JSON answer; the default takes the text as exactly that.
    :param busy_within: when given, the sender must be seen processing within that many seconds of its
        input, before its turn completes.
    :param timeout: seconds the sender's turn may take.
    """
    from cao_hookspecs import TerminalStatus

    store = cao_server.home / "agent-store"
    for name, text in _profiles(provider, mcp_server, profile_fields or {}).items():
        (store / f"{name}.md").write_text(text, encoding="utf-8")
    async with cao_server.client() as api:
        receiver = await api.create_session(CreateTerminalRequest(
            agent_profile=RECEIVER, working_directory=workdir))
        sender = await api.create_session(CreateTerminalRequest(
            agent_profile=SENDER, working_directory=workdir))
        model_server.script.add(call_tool(tool, {"receiver_id": receiver.id, "message": MESSAGE}),
                                respond(_tool_said))
        await api.send_input(sender.id, "Tell the reviewer the build is green.")
        if busy_within is not None:
            await api.wait_for_status(sender.id, [TerminalStatus.PROCESSING], timeout=busy_within)
        await api.wait_for_status(sender.id, [TerminalStatus.COMPLETED], timeout=timeout)

        turns = model_server.turns()
        assert len(turns) == 2, (f"expected the tool call and the answer after it, got {len(turns)} model "
                                 f"request(s): {[t.conversation.last_user_text for t in turns]}")
        first, second = turns
        result = second.conversation.last_tool_result
        assert result is not None and not result.is_error, (
            f"the CLI passed back no successful result of {tool}: {result!r}; the request ended with "
            f"{_last_messages(second.body)}")
        try:
            payload = parse(result.output)
        except ValueError as exc:
            raise AssertionError(f"the result of {tool} is not cao's JSON answer ({exc}): "
                                 f"{result.output[:500]!r}") from None
        succeeded = isinstance(payload, dict) and payload.get("success") is True
        assert succeeded, f"{tool} answered {result.output[:500]!r}"

        async def delivered() -> list[Message]:
            return [m for m in await api.list_messages(receiver.id) if m.sender_id == sender.id]

        found = await eventually(delivered, 20, "the message in the receiver's inbox")
        assert len(found) == 1, f"one message was sent, the receiver's inbox holds {found!r}"
        assert MESSAGE in found[0].body, found[0].body
        # The receiver (a mock agent) got it typed in and answered it.
        await api.wait_for_status(receiver.id, [TerminalStatus.COMPLETED], timeout=20)
        heard = await api.get_output(receiver.id, "last")
        assert MESSAGE in heard, f"the receiver's last message does not hold the message: {heard!r}"
        last = await api.get_output(sender.id, "last")
        assert last.startswith(ANSWER_PREFIX), f"the sender's last message is not the scripted one: {last!r}"
        inbox = await api.list_messages(receiver.id)
        model_server.script.assert_done()
    return SentOverMcp(tool=tool, sender=sender, receiver=receiver, first=first, second=second, result=result,
                       payload=payload, inbox=inbox, last=last)
