"""Entry point of cao-provider-copilot-cli (kept thin: the provider is imported when asked for)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cao_hookspecs import ProviderSpec


@hookimpl
def cao_register_providers() -> Iterable[ProviderSpec]:
    """Register the ``copilot_cli`` provider."""
    from .provider import copilot_cli_provider

    return [copilot_cli_provider()]
