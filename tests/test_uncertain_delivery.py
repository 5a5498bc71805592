"""A delivery cut short on a backend that keeps no input marks: nothing says whether the text went in, and
the receiver's provider decides, as its record says: type it again, or report it ``uncertain`` to its
sender and the event stream and never type it again.

The backend is the scripted in-process world of test_delivery_properties (tmux always keeps marks, so
no real backend here lacks them); the kernel, the engine and the SQLite inbox are real.
"""

from __future__ import annotations

import asyncio
import tempfile

import pytest

from cao_hookspecs import (
    AgentProfile,
    BackendSpec,
    CreateTerminalRequest,
    LaunchPlan,
    MessageState,
    ProviderCapabilities,
    ProviderSpec,
    hookimpl,
)
from cao_kernel.kernel import Kernel

from .test_delivery_properties import ScriptedBackend, World, _detect


class NoMarks(ScriptedBackend):
    def input_mark(self, terminal_id):
        raise NotImplementedError("this backend keeps no input marks")


class Plugin:
    def __init__(self, world: World, choice: str) -> None:
        self.world, self.choice, self.uncertain = world, choice, []

    @hookimpl
    def cao_register_backends(self):
        return [BackendSpec(name="scripted", factory=lambda ctx: NoMarks(self.world))]

    @hookimpl
    def cao_register_providers(self):
        return [ProviderSpec(name="scripted", binary="true", launch=lambda ctx: LaunchPlan(argv=["true"]),
                             detect_status=_detect, extract_last_message=lambda text: text,
                             capabilities=ProviderCapabilities(uncertain_delivery=self.choice))]

    @hookimpl
    def cao_after_message_uncertain(self, message, reason):
        self.uncertain.append((message, reason))


async def _boot(home: str, plugin: Plugin) -> Kernel:
    import cao_inbox_sqlite.plugin

    kernel = Kernel(plugins=[plugin, cao_inbox_sqlite.plugin], load_entrypoints=False, home=home,
                    settings={"CAO_TERMINAL_BACKEND": "scripted", "CAO_INPUT_SETTLE": "0.05"})
    kernel.add_profile(AgentProfile(name="worker", provider="scripted"))
    await kernel.start()
    return kernel


async def _abandon(kernel: Kernel, world: World) -> None:
    """The kernel process dies: nothing is cleaned up."""
    await kernel.delivery.aclose()
    for live in list(kernel.terminals._live.values()):
        live.tracker.detach()
        if live.refresh_task is not None:
            live.refresh_task.cancel()
    kernel.io.close(wait=True)
    kernel.delivery.store.close()
    world.watchers.clear()


def _ready(world: World, terminal_id: str) -> None:
    with world.lock:
        world.terminals[terminal_id]["screen"] = "READY"
    world.emit(terminal_id)


async def _typed_while_the_kernel_dies(choice: str):
    """A message claimed and typed into its receiver, then the kernel gone before recording it; the next
    kernel started, the receiver idle again."""
    home, world = tempfile.mkdtemp(prefix="cao-uncertain-"), World()
    plugin = Plugin(world, choice)
    kernel = await _boot(home, plugin)
    request = CreateTerminalRequest(agent_profile="worker", working_directory=home)
    sender = await kernel.create_session(request)
    receiver = await kernel.create_session(request)
    world.type(receiver.id, "busy")  # the receiver works on something
    world.emit(receiver.id)
    await asyncio.sleep(0.1)
    queued = await kernel.send_message(sender.id, receiver.id, "<<token>>")
    claimed = kernel.delivery.store.claim(queued.id)
    assert claimed is not None
    world.type(receiver.id, claimed.body)
    await _abandon(kernel, world)
    _ready(world, receiver.id)
    kernel = await _boot(home, plugin)
    return kernel, world, plugin, sender, receiver, queued


def _times_typed(world: World, terminal_id: str) -> int:
    return sum(text.count("<<token>>") for tid, text in world.typed if tid == terminal_id)


async def test_a_provider_that_reports_marks_the_message_uncertain_and_tells_its_sender():
    kernel, world, plugin, sender, receiver, queued = await _typed_while_the_kernel_dies("report")
    try:
        settled = kernel.delivery.store.get(queued.id)
        assert settled.state is MessageState.UNCERTAIN, settled
        assert "keeps no record of what was typed" in settled.last_error
        assert [m.id for m, _ in plugin.uncertain] == [queued.id]
        _ready(world, receiver.id)
        await asyncio.sleep(0.3)
        assert _times_typed(world, receiver.id) == 1, world.typed
        notices = [m.body for m in await kernel.list_messages(sender.id, limit=10)]
        assert any(f"Your message {queued.id} to terminal {receiver.id} may or may not have arrived" in body
                   for body in notices), notices
    finally:
        await kernel.aclose()


async def test_a_provider_that_retypes_types_the_message_again_and_counts_it_delivered():
    kernel, world, plugin, sender, receiver, queued = await _typed_while_the_kernel_dies("retype")
    try:
        for _ in range(100):
            if kernel.delivery.store.get(queued.id).state is MessageState.DELIVERED:
                break
            await asyncio.sleep(0.02)
        assert kernel.delivery.store.get(queued.id).state is MessageState.DELIVERED
        assert _times_typed(world, receiver.id) == 2, world.typed  # at least once: here, twice
        assert plugin.uncertain == []
    finally:
        await kernel.aclose()


def test_the_choice_is_one_of_two():
    with pytest.raises(ValueError, match="uncertain_delivery"):
        ProviderCapabilities(uncertain_delivery="guess")
