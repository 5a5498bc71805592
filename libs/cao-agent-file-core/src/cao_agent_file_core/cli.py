"""``ChatCli``: what one provider says about its CLI, everything the shared code needs to know."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChatCli"]


@dataclass(frozen=True, kw_only=True)
class ChatCli:
    """One CLI of the family (Kiro CLI and its predecessor, Amazon Q Developer CLI), described."""

    #: Short name in refusals: "cannot name a Kiro agent file", "not a Q tool name".
    short: str
    #: Product name in the missing-program error: "Kiro CLI", "Amazon Q Developer CLI".
    title: str
    #: The provider's distribution, named in the missing-program error.
    distribution: str
    #: The program looked up on PATH.
    binary: str
    #: Environment variable naming the program to run instead of the one on PATH.
    binary_env: str
    #: How to install the CLI, quoted when it is missing.
    install_hint: str
    #: The user's global agent folder, relative to HOME (the CLI finds agents there by name).
    agent_dir: tuple[str, ...]
    #: Agent-file key that receives the profile's ``use_legacy_mcp_json`` (Kiro renamed it).
    legacy_mcp_json_key: str
    #: Name of the agent file's copy in the terminal's runtime folder (for inspection only).
    runtime_copy: str
