"""A model chosen per call (launch, handoff, assign) reaches the worker's CLI, or is refused by name
where the provider cannot choose one; nothing is started for a refused call."""

from __future__ import annotations

import attrs
import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, TerminalStatus, hookimpl
from cao_kernel.errors import InvalidInput

SUPERVISOR = AgentProfile(name="supervisor", provider="mock_cli")
PINNED = AgentProfile(name="pinned", provider="mock_cli")
CHOOSER = AgentProfile(name="chooser", provider="mock_models", model="profile-model")


class ModelledMock:
    """mock_cli under another name, declaring that it takes a model; it records each launch's model."""

    def __init__(self) -> None:
        self.models: list[str | None] = []

    @hookimpl
    def cao_register_providers(self):
        from cao_provider_mock.provider import mock_provider

        spec = mock_provider()

        def launch(ctx):
            self.models.append(ctx.model)
            return spec.launch(ctx)

        return [attrs.evolve(spec, name="mock_models", launch=launch,
                             capabilities=attrs.evolve(spec.capabilities, takes_model=True))]


def _kernel(make_kernel, recorder: ModelledMock):
    kernel = make_kernel()
    kernel.register_plugin(recorder, name="mock_models")
    for profile in (SUPERVISOR, PINNED, CHOOSER):
        kernel.add_profile(profile)
    return kernel


async def test_handoff_and_assign_run_the_worker_on_the_model_asked_for(make_kernel, workdir):
    recorder = ModelledMock()
    async with _kernel(make_kernel, recorder) as kernel:
        boss = await kernel.create_session(CreateTerminalRequest(agent_profile="supervisor",
                                                                 working_directory=workdir))
        done = await kernel.handoff(boss.id, "chooser", "say hi", timeout=30, model="fast-1")
        assert done.success, done.message
        assigned = await kernel.assign(boss.id, "chooser", "say hi", model="deep/2:beta")
        await kernel.wait_for_status(assigned.terminal_id, {TerminalStatus.COMPLETED}, timeout=20)
        # With no model asked for, the profile's holds.
        plain = await kernel.assign(boss.id, "chooser", "say hi")
        await kernel.wait_for_status(plain.terminal_id, {TerminalStatus.COMPLETED}, timeout=20)
        assert recorder.models == ["fast-1", "deep/2:beta", "profile-model"]


async def test_a_provider_that_cannot_choose_a_model_refuses_it_by_name(make_kernel, workdir):
    recorder = ModelledMock()
    async with _kernel(make_kernel, recorder) as kernel:
        with pytest.raises(InvalidInput, match="'mock_cli' cannot choose its model"):
            await kernel.create_session(CreateTerminalRequest(agent_profile="supervisor", model="fast-1",
                                                              working_directory=workdir))
        assert await kernel.list_sessions() == []
        boss = await kernel.create_session(CreateTerminalRequest(agent_profile="supervisor",
                                                                 working_directory=workdir))
        for call in (kernel.handoff(boss.id, "pinned", "hi", timeout=30, model="fast-1"),
                     kernel.assign(boss.id, "pinned", "hi", model="fast-1")):
            with pytest.raises(InvalidInput, match="'mock_cli' cannot choose its model"):
                await call
        assert [t.id for t in await kernel.list_terminals(boss.session_name)] == [boss.id]
        # A malformed model is refused before any provider is asked.
        with pytest.raises(InvalidInput, match="model"):
            await kernel.handoff(boss.id, "chooser", "hi", timeout=30, model="two words")
        assert recorder.models == []


def test_the_mcp_tools_and_the_http_routes_take_a_model():
    from cao_mcp.tools import ASSIGN, HANDOFF
    from cao_server.endpoints import ENDPOINTS

    assert "model" in HANDOFF.params and "model" in ASSIGN.params
    routes = {(e.method, e.path): {p.name for p in e.params} for e in ENDPOINTS}
    for path in ("/terminals/{terminal_id}/handoff", "/handoff", "/terminals/{terminal_id}/assign"):
        assert "model" in routes[("POST", path)], path
