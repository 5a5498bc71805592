"""Entry point of cao-provider-omp (kept thin: the provider loads when the hook is called).

Every ``cao`` command imports this module, ``cao --help`` included: import nothing heavy here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cao_hookspecs import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cao_hookspecs import ProviderSpec


@hookimpl
def cao_register_providers() -> Iterable[ProviderSpec]:
    """Register the ``omp`` provider."""
    from .provider import provider

    return [provider()]
