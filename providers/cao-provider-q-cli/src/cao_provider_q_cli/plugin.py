"""Entry point of cao-provider-q-cli (kept thin: the provider is imported when asked for)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cao_hookspecs import ProviderSpec


@hookimpl
def cao_register_providers() -> Iterable[ProviderSpec]:
    """Register the ``q_cli`` provider."""
    from .provider import q_cli_provider

    return [q_cli_provider()]
