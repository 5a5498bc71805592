"""A provider's record from the modules every provider has.

A provider package (as ``cao provider new`` lays one out) keeps its program and launch plan in
``launch.py`` and its screen reader in ``screen.py``. The record's fields that come from them are the
same wiring in every provider, stated once here; what the provider says about its CLI (description,
capabilities and why, dialogs, versions) stays in its own ``provider.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from cao_hookspecs import LaunchContext, LaunchPlan, ProviderSpec, StatusReport

__all__ = ["LaunchModule", "ScreenModule", "provider_spec"]


class LaunchModule(Protocol):
    """A provider's ``launch`` module: the program it starts, and the plan that starts it."""

    #: The program looked up on ``PATH``.
    BINARY: str
    #: The variable naming another program to run instead.
    BINARY_ENV: str | None
    #: How a user installs the CLI.
    INSTALL_HINT: str
    launch: Callable[[LaunchContext], LaunchPlan]


class ScreenModule(Protocol):
    """A provider's ``screen`` module: its status detector and its answer extractor."""

    detect_status: Callable[[str], StatusReport]
    extract_last_message: Callable[[str], str]


def provider_spec(name: str, launch: LaunchModule, screen: ScreenModule, **fields: Any) -> ProviderSpec:
    """The record of provider ``name``: program, install hint and launch plan from its ``launch``
    module, detector and extractor from its ``screen`` module, everything else from ``fields``
    (``ProviderSpec``'s other keyword arguments; those left out keep the contract's defaults).
    """
    return ProviderSpec(name=name, binary=launch.BINARY, binary_env=launch.BINARY_ENV,
                        install_hint=launch.INSTALL_HINT, launch=launch.launch,
                        detect_status=screen.detect_status, extract_last_message=screen.extract_last_message,
                        **fields)
