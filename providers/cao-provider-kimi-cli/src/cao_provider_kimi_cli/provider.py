"""The ``kimi_cli`` provider record: how cao launches Kimi CLI and reads its screen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec

from . import launch, screen
from .prompts import read_prompt
from .dialogs import STARTUP_DIALOGS
from .share import read_user_config, user_share_dir

__all__ = ["NAME", "TESTED_VERSIONS", "kimi_cli_provider", "model_endpoint"]

NAME = "kimi_cli"
#: kimi-cli releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("1.51.0",)
# Provider types whose address Kimi takes from an environment variable when one is set.
_ENV_ADDRESS = {"kimi": "KIMI_BASE_URL", "openai_legacy": "OPENAI_BASE_URL",
                "openai_responses": "OPENAI_BASE_URL"}


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The base URL of the model API Kimi CLI will call with ``env``: the ``base_url`` of the provider
    behind the config's default model, replaced by ``KIMI_BASE_URL`` (Kimi's own provider type) or
    ``OPENAI_BASE_URL`` (the OpenAI types) when set, as Kimi does; with no model configured,
    ``KIMI_BASE_URL`` (Kimi's environment-only set-up). None when nothing says (Kimi then asks the
    user to log in). Reads files and variables only and never raises."""
    try:
        config = read_user_config(user_share_dir(env))
    except ValueError:
        return None
    model = _table(_table(config.get("models")).get(config.get("default_model")))
    provider = _table(_table(config.get("providers")).get(model.get("provider")))
    if not provider:
        return _url(env.get("KIMI_BASE_URL"))
    variable = _ENV_ADDRESS.get(str(provider.get("type")))
    return _url(env.get(variable) if variable else None) or _url(provider.get("base_url"))


def _url(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().startswith(("http://", "https://")):
        return value.strip()
    return None


def kimi_cli_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        description="Kimi CLI, Moonshot AI's agent CLI (kimi-cli on PyPI)",
        # One Enter after a bracketed paste submits; a message typed while Kimi works is queued by Kimi
        # itself and sent when the turn ends.
        capabilities=ProviderCapabilities(accepts_input_while_busy=True, enter_count=1, submit_delay=0.0,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        read_prompt=read_prompt,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
    )
