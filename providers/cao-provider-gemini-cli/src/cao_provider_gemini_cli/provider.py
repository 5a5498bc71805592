"""The ``gemini_cli`` provider record: how cao launches Gemini CLI and reads its screen."""

from __future__ import annotations

from collections.abc import Mapping

from cao_hookspecs import ProviderCapabilities, ProviderSpec
from cao_launch_core.record import provider_spec
from cao_screen_core.reports import pending_reader
from cao_launch_core.user_config import read_json_object

from .config import user_gemini_dir
from . import launch, screen
from .dialogs import STARTUP_DIALOGS
from .prompts import read_prompt

__all__ = ["NAME", "TESTED_VERSIONS", "gemini_cli_provider", "model_endpoint"]

NAME = "gemini_cli"
#: Gemini CLI releases whose screens are recorded under tests/screens/ and pass the live tests.
TESTED_VERSIONS = ("0.61.0",)

GEMINI_API = "https://generativelanguage.googleapis.com"
VERTEX_API = "https://aiplatform.googleapis.com"
CODE_ASSIST_API = "https://cloudcode-pa.googleapis.com"
# Vertex AI's regional endpoints for data residency, as Gemini CLI picks them.
_VERTEX_MULTI_REGION = {"us": "https://aiplatform.us.rep.googleapis.com",
                        "eu": "https://aiplatform.eu.rep.googleapis.com"}


def _auth_type(env: Mapping[str, str]) -> str | None:
    """The sign-in Gemini CLI will use with ``env``: the user's saved choice, else what the private
    settings choose (the API key when one is set), else what the environment implies."""
    settings = read_json_object(user_gemini_dir(env) / "settings.json")
    security = settings.get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    chosen = auth.get("selectedType") if isinstance(auth, dict) else None
    if isinstance(chosen, str) and chosen:
        return chosen
    if env.get("GEMINI_API_KEY"):
        return "gemini-api-key"
    if env.get("GOOGLE_GENAI_USE_VERTEXAI") == "true":
        return "vertex-ai"
    if env.get("GOOGLE_GENAI_USE_GCA") == "true":
        return "oauth-personal"
    return None


def model_endpoint(env: Mapping[str, str]) -> str | None:
    """The base URL of the model API Gemini CLI will call with ``env``.

    API key: ``GOOGLE_GEMINI_BASE_URL``, else the Gemini API. Vertex AI: ``GOOGLE_VERTEX_BASE_URL``,
    else the endpoint of ``GOOGLE_CLOUD_LOCATION``. Google sign-in: ``CODE_ASSIST_ENDPOINT``, else
    Code Assist. None when no sign-in is chosen yet (Gemini CLI would ask for one).
    """
    try:
        kind = _auth_type(env)
    except (OSError, ValueError):  # an unreadable home: cannot tell, never raise
        return None
    if kind in ("gemini-api-key", "gateway"):
        return (env.get("GOOGLE_GEMINI_BASE_URL") or GEMINI_API).rstrip("/")
    if kind == "vertex-ai":
        custom = env.get("GOOGLE_VERTEX_BASE_URL")
        if custom:
            return custom.rstrip("/")
        location = (env.get("GOOGLE_CLOUD_LOCATION") or "").strip()
        if location in _VERTEX_MULTI_REGION:
            return _VERTEX_MULTI_REGION[location]
        if location and location != "global" and env.get("GOOGLE_CLOUD_PROJECT"):
            return f"https://{location}-aiplatform.googleapis.com"
        return VERTEX_API
    if kind in ("oauth-personal", "compute-default-credentials", "cloud-shell"):
        return (env.get("CODE_ASSIST_ENDPOINT") or CODE_ASSIST_API).rstrip("/")
    return None


def gemini_cli_provider() -> ProviderSpec:
    """The provider record registered by this distribution's plugin."""
    return provider_spec(
        NAME, launch, screen,
        exit_command="/quit",
        description="Gemini CLI, Google's agent CLI (private GEMINI_CLI_HOME per terminal)",
        # One Enter, half a second after the paste: Gemini CLI takes an Enter within 40 ms of a paste as
        # a newline, and right after "/quit" is pasted its command menu may still list every command,
        # the first ("/clear") selected, for a moment. A second Enter could approve a tool prompt that a
        # fast model already raised.
        capabilities=ProviderCapabilities(enter_count=1, submit_delay=0.5,
                                          uncertain_delivery="retype", takes_model=True),
        startup_dialogs=STARTUP_DIALOGS,
        tested_versions=TESTED_VERSIONS,
        model_endpoint=model_endpoint,
        read_prompt=read_prompt,
        pending_input=pending_reader(screen.parse_screen),
    )
