"""Scripted model servers for driving real agent CLIs offline in tests.

- :mod:`.script`: the turn-script API shared by every server (``Script``, ``reply``, ``call_tool``,
  ``think``, ``respond``, ``hold``, ``fail``) and the recorded requests.
- :mod:`.anthropic`: ``AnthropicServer``, the Messages API (Claude Code).
- :mod:`.openai`: ``OpenAIServer``, the Responses API (Codex, Kimi CLI); its base URL is ``server.url + "/v1"``.
- :mod:`.chat`: ``ChatServer``, Chat Completions (OpenAI-compatible clients); base URL the same.
- :mod:`.gemini`: ``GeminiServer``, the Gemini API's generateContent (Gemini CLI).
- :mod:`.cli`: installing a real agent CLI from npm or PyPI into a per-machine cache, and sandboxed homes.

Nothing here is imported by the ``cao_testkit`` pytest plugin itself: import the module you need.
"""

from __future__ import annotations

from .script import *  # noqa: F403 - the script API is this package's API
from .script import __all__ as __all__  # noqa: PLC0414
