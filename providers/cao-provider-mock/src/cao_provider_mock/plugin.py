"""Entry point of cao-provider-mock (kept thin: heavy imports happen inside functions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cao_hookspecs import ProviderSpec


@hookimpl
def cao_register_providers() -> Iterable[ProviderSpec]:
    """Register the ``mock_cli`` provider."""
    from .provider import mock_provider

    return [mock_provider()]
