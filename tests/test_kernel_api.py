"""``KernelAPI`` is the one statement of what cao can do: the in-process ``Kernel`` and cao-server's
``HttpKernel`` implement every method with exactly its signature."""

from __future__ import annotations

import inspect

import pytest

from cao_hookspecs import KernelAPI


def _api_methods() -> list[str]:
    return sorted(name for name, value in vars(KernelAPI).items()
                  if inspect.isfunction(value) and not name.startswith("_"))


def _implementations() -> list[type]:
    from cao_kernel.kernel import Kernel
    from cao_server.client import HttpKernel

    return [Kernel, HttpKernel]


def test_the_api_is_what_the_surfaces_use():
    assert {"create_session", "create_terminal", "send_message", "handoff", "assign", "mcp_tools",
            "list_providers", "mcp_connected"} <= set(_api_methods())


@pytest.mark.parametrize("name", _api_methods())
def test_every_implementation_has_the_protocols_signature(name: str):
    expected = inspect.signature(getattr(KernelAPI, name))
    assert inspect.iscoroutinefunction(getattr(KernelAPI, name)), f"KernelAPI.{name} must be a coroutine"
    for implementation in _implementations():
        method = getattr(implementation, name, None)
        assert method is not None, f"{implementation.__name__} lacks {name}"
        assert inspect.iscoroutinefunction(method), f"{implementation.__name__}.{name} must be a coroutine"
        assert inspect.signature(method) == expected, (
            f"{implementation.__name__}.{name}{inspect.signature(method)} differs from "
            f"KernelAPI.{name}{expected}")
