"""How every server command reaches cao: one ``KernelAPI`` over HTTP, opened and closed per command.

``run(factory)`` connects to the server named by the settings (``CAO_API_HOST``/``CAO_API_PORT``),
checks that it answers, awaits ``factory(api)``, closes the client, and turns cao's errors into click
errors (message on stderr, exit 1). Commands never see an HTTP detail.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI

T = TypeVar("T")


def settings(ctx: click.Context | None = None) -> dict[str, str]:
    """The ``CAO_*`` settings of this invocation: the kernel's when the ``cao`` root built one, else
    the environment's. Both hold the same values for the variables the client reads."""
    kernel_settings: Mapping[str, Any] | None = None
    if ctx is not None:
        from cao_hookspecs.cli import kernel_from_context

        try:
            kernel_settings = getattr(kernel_from_context(ctx), "settings", None)
        except RuntimeError:  # a bare click runner without the cao root
            kernel_settings = None
    source: Mapping[str, Any] = kernel_settings if kernel_settings is not None else os.environ
    return {k: str(v) for k, v in source.items() if k.startswith("CAO_") and v is not None}


def connect(config: Mapping[str, str]) -> Any:
    """An HTTP client (not yet checked) for the server the settings name."""
    from cao_server.client import connect as connect_client

    return connect_client(dict(config))


def server_not_running() -> type[BaseException]:
    """The error the client raises when nothing answers (a ``CaoError``)."""
    from cao_server.errors import ServerNotRunning

    return ServerNotRunning


async def _session(config: Mapping[str, str], factory: Callable[[KernelAPI], Awaitable[T]]) -> T:
    api = connect(config)
    try:
        await api.ping()
        return await factory(api)
    finally:
        await api.aclose()


def run(factory: Callable[[KernelAPI], Awaitable[T]], ctx: click.Context | None = None) -> T:
    """Run ``factory(api)`` against the running cao-server and return its result.

    A missing server (``ServerNotRunning``: one line naming the address and ``cao server``) and any
    ``CaoError`` the server reports become a click error: the message on stderr, exit status 1.
    ``ctx`` defaults to the current click context.
    """
    from cao_hookspecs.errors import CaoError

    config = settings(ctx or click.get_current_context(silent=True))
    try:
        return asyncio.run(_session(config, factory))
    except CaoError as exc:
        raise click.ClickException(str(exc).strip() or type(exc).__name__) from None
