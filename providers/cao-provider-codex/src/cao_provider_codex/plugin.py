"""Entry point of cao-provider-codex (kept thin: the provider loads when the hook is called)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cao_hookspecs import ProviderSpec


@hookimpl
def cao_register_providers() -> Iterable[ProviderSpec]:
    """Register the ``codex`` provider."""
    from .provider import codex_provider

    return [codex_provider()]
