"""Area 1: providers (one per agent CLI)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .markers import _hookspec

if TYPE_CHECKING:
    from .types import ProviderSpec


@_hookspec
def cao_register_providers() -> Iterable[ProviderSpec]:
    """Register agent CLIs that cao can run.

    Kind: registration (broadcast; every implementation is called).

    :return: an iterable of :class:`~cao_hookspecs.types.ProviderSpec`, possibly empty.

    The kernel flattens the results of all plugins. Two providers with the same ``name`` are an
    error that names both plugins and their distributions; the kernel reports it and keeps the first.

    Errors: an implementation that raises is reported as a broken plugin (naming it) and contributes
    nothing; other plugins' providers are kept.

    Stability: stable since 0.1.

    Example::

        @hookimpl
        def cao_register_providers():
            return [ProviderSpec(name="my_cli", binary="my-cli", launch=launch,
                                 detect_status=detect, extract_last_message=extract)]
    """
