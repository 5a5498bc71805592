"""Behaviours used by the tests (found through CAO_MOCK_BEHAVIOUR_PATH, like an example's)."""

from __future__ import annotations

import sys


async def scripted(turn):
    """Reacts to a few words so one program run can show every way a turn ends."""
    turn.memory.setdefault("tasks", []).append(turn.task)
    word = turn.task.split(" ", 1)[0]
    if word == "history":
        return "\n".join(f"{i}. {task}" for i, task in enumerate(turn.memory["tasks"], 1))
    if word == "quiet":
        turn.say("nothing to say")
        return None
    if word == "fail":
        raise RuntimeError("asked to fail")
    if word == "sdk":
        return f"mcp imported: {'mcp' in sys.modules}"
    if word == "add":
        result = await turn.call("add", a=2, b=3)
        return f"sum {result['sum']} from pid {result['pid']} for terminal {result['terminal']}"
    if word == "shout":
        return await turn.call("shout", text=turn.task.partition(" ")[2])
    if word == "refuse":
        try:
            await turn.call("refuse", reason="not today")
        except Exception as exc:  # the tool's error reaches the behaviour as an exception
            return f"caught: {exc}"
    if word == "missing":
        await turn.call("no_such_tool")
    if word == "think":
        await turn.think(float(turn.task.split()[1]))
        return "thought"
    if word == "who":
        return f"{turn.terminal_id} {turn.assigned_by} {turn.message_from} {turn.reply_to}"
    return f"task: {turn.task}"


def not_async(turn):
    return "sync functions are refused"


async def asking(turn):
    """Asks what its task says and answers with the choice: ``ask`` a question, ``allow <args>`` a
    permission for ``tool`` with ``a=1 b=2`` style arguments, ``twice`` two questions in a row, ``slow``
    the question after half a second."""
    from cao_provider_mock.asking import Option

    word, _, rest = turn.task.partition(" ")
    if word == "slow":
        await turn.think(0.5)
    if word == "allow":
        arguments = dict(pair.split("=", 1) for pair in rest.split()) if rest else {}
        choice = await turn.ask(tool="tool", arguments=arguments)
    else:
        choice = await turn.ask("Pick a colour?", ["Red", Option("Green", "the calm one"),
                                                   Option("Other", takes_text=True)])
        if word == "twice":
            second = await turn.ask("Sure?", ["Yes", "No"])
            return f"{choice.number} {choice.label} {choice.text}; {second.number} {second.label}"
    return f"{choice.number} {choice.label} {choice.text}"
