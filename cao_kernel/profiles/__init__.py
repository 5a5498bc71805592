"""Agent profiles: parsing upstream's Markdown + YAML frontmatter, the stores a name is looked up
in, and ``cao install``.

- :mod:`.parse`: text <-> ``AgentProfile`` (``parse_profile_text``, ``serialize_profile``);
- :mod:`.validate`: the field rules and the name rule;
- :mod:`.store`: lookup order and listing (``ProfileStore``, ``find_profile``, ``list_profiles``);
- :mod:`.envfile`: the managed ``.env`` behind ``${VAR}`` placeholders;
- :mod:`.fetch` and :mod:`.install`: installing from a name, a file or an https URL.

Nothing heavy is imported here: YAML, urllib and ssl load inside the functions that need them.
"""

from __future__ import annotations

from .install import InstallResult, install
from .parse import load_profile_file, parse_profile_text, profile_to_dict, serialize_profile
from .store import ProfileEntry, ProfileStore, find_profile, list_profiles

__all__ = [
    "InstallResult",
    "ProfileEntry",
    "ProfileStore",
    "find_profile",
    "install",
    "list_profiles",
    "load_profile_file",
    "parse_profile_text",
    "profile_to_dict",
    "serialize_profile",
]
