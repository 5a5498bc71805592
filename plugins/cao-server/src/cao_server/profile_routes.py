"""Upstream's profile authoring routes, skills and settings reads: create, replace and delete profiles in
the local store, read one as stored, validate a document, the frontmatter schema, search, a skill's
guide, the agent and skill folder settings, the memory setting (cao has no memory feature) and OAuth
discovery (cao has no OAuth server: it answers as upstream does with none configured).

The kernel does the work through methods beyond ``KernelAPI`` (an in-process kernel has them); a kernel
without one answers 501. The static paths are mounted ahead of ``/agents/profiles/{name}`` so it never
takes ``search`` or ``schema`` for a profile name.
"""

from __future__ import annotations

from typing import Any

from cao_hookspecs.names import PROFILE_NAME_RE, json_pattern

from .endpoints import Call, Context, Endpoint
from .errors import NotSupported
from .params import Param

# Upstream's limit on a profile document (cao's own profile reader has the same one).
MAX_PROFILE_BYTES = 256 * 1024
SEARCH_LIMIT = 100

CONTENT = Param("content", required=True, body_only=True, max_bytes=MAX_PROFILE_BYTES,
                description="the whole profile: YAML frontmatter and Markdown body")
NAME = Param("name", required=True, description="the profile's name (its file name in the local store)",
             rule={"pattern": json_pattern(PROFILE_NAME_RE)})

_FINDING = {"type": "object", "required": ["severity", "message"], "properties": {
    "severity": {"type": "string", "enum": ["error", "warning"]}, "message": {"type": "string"},
    "path": {"type": "string", "nullable": True}}}
WRITE_RESULT = {"type": "object", "required": ["name", "warnings"], "properties": {
    "name": {"type": "string"}, "warnings": {"type": "array", "items": _FINDING}}}
VALIDATION = {"type": "object", "required": ["valid", "messages"], "properties": {
    "valid": {"type": "boolean"}, "messages": {"type": "array", "items": _FINDING}}}
NAMED_TEXT = {"type": "object", "required": ["name", "content"], "properties": {
    "name": {"type": "string"}, "content": {"type": "string"}}}
SEARCH_HIT = {"type": "object", "required": ["name", "coverage", "score"], "properties": {
    "name": {"type": "string"}, "description": {"type": "string"},
    "capabilities": {"type": "array", "items": {"type": "string"}},
    "tags": {"type": "array", "items": {"type": "string"}}, "role": {"type": "string", "nullable": True},
    "source": {"type": "string"}, "coverage": {"type": "integer"}, "score": {"type": "number"}}}
_PATHS = {"type": "array", "items": {"type": "string"}}
AGENT_DIRS = {"type": "object", "required": ["agent_dirs", "extra_dirs", "disabled_dirs"], "properties": {
    "agent_dirs": {"type": "object", "additionalProperties": {"type": "string"}},
    "extra_dirs": _PATHS, "disabled_dirs": _PATHS}}
SKILL_DIRS = {"type": "object", "required": ["skills_dir", "extra_dirs"], "properties": {
    "skills_dir": {"type": "string"}, "extra_dirs": _PATHS}}
_DIR_RULE = {"maxItems": 64, "items": {"type": "string", "minLength": 1, "maxLength": 4096}}
EXTRA_DIRS = Param("extra_dirs", type="list", body_only=True, strict=True, rule=_DIR_RULE,
                   description="extra folders (absolute or ~, existing), replacing the list; null: unchanged")
MEMORY = {"type": "object", "required": ["enabled", "learning_enabled", "settings_readable"], "properties": {
    "enabled": {"type": "boolean"}, "learning_enabled": {"type": "boolean"},
    "settings_readable": {"type": "boolean"}}}


def _method(ctx: Context, name: str) -> Any:
    method = getattr(ctx.kernel, name, None)
    if method is None:
        raise NotSupported(f"this server's kernel does not support {name.replace('_', ' ')}")
    return method


async def create_profile(ctx: Context, call: Call) -> Any:
    name = call.args["name"]
    await _method(ctx, "save_profile")(name, call.args["content"], replace=False)
    return {"name": name, "warnings": []}


async def replace_profile(ctx: Context, call: Call) -> Any:
    name = call.path["name"]
    await _method(ctx, "save_profile")(name, call.args["content"], replace=True)
    return {"name": name, "warnings": []}


async def delete_profile(ctx: Context, call: Call) -> Any:
    from starlette.responses import Response

    await _method(ctx, "delete_profile")(call.path["name"])
    return Response(status_code=204)


async def profile_source(ctx: Context, call: Call) -> Any:
    name = call.path["name"]
    return {"name": name, "content": await _method(ctx, "profile_source")(name)}


async def validate_profile(ctx: Context, call: Call) -> Any:
    messages = _method(ctx, "check_profile")(call.args["content"])
    return {"valid": not any(m["severity"] == "error" for m in messages), "messages": messages}


async def profile_schema(ctx: Context, call: Call) -> Any:
    return _method(ctx, "profile_schema")()


async def search_profiles(ctx: Context, call: Call) -> Any:
    return await _method(ctx, "search_profiles")(call.args["q"], limit=call.args["limit"])


async def skill(ctx: Context, call: Call) -> Any:
    name = call.path["skill"]
    return {"name": name, "content": await _method(ctx, "skill_content")(name)}


async def get_agent_dirs(ctx: Context, call: Call) -> Any:
    return _method(ctx, "agent_dirs")()


async def set_agent_dirs(ctx: Context, call: Call) -> Any:
    import asyncio

    args = call.args
    return await asyncio.to_thread(_method(ctx, "set_agent_dirs"), args["agent_dirs"], args["extra_dirs"],
                                   args["disabled_dirs"])


async def get_skill_dirs(ctx: Context, call: Call) -> Any:
    return _method(ctx, "skill_dirs")()


async def set_skill_dirs(ctx: Context, call: Call) -> Any:
    import asyncio

    return await asyncio.to_thread(_method(ctx, "set_skill_dirs"), call.args["extra_dirs"])


async def memory_settings(ctx: Context, call: Call) -> Any:
    # cao keeps no memory between sessions: say so the way upstream does with its memory switched off.
    return {"enabled": False, "learning_enabled": False, "settings_readable": True}


async def oauth_resource(ctx: Context, call: Call) -> Any:
    from cao_hookspecs import NotFound

    raise NotFound("no OAuth authorization server is configured: cao-server takes its API token as a bearer "
                   "token (the api-token file of its cao home)")


P = "/agents/profiles"

PROFILE_ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", P + "/search", "search_profiles", "Loadable profiles ranked against free-text words "
             "(name, description, capabilities, tags, role; never the prompt)", search_profiles, "profiles",
             response={"type": "array", "items": SEARCH_HIT}, errors=(501,),
             params=(Param("q", required=True, description="capability keywords, e.g. 'review python'"),
                     Param("limit", type="integer", default=10, minimum=1, maximum=SEARCH_LIMIT,
                           description="most results to answer"))),
    Endpoint("GET", P + "/schema", "profile_schema", "JSON Schema of a profile's frontmatter", profile_schema,
             "profiles", response={"type": "object"}, errors=(501,)),
    Endpoint("POST", P + "/validate", "validate_profile", "Check a profile document; writes nothing",
             validate_profile, "profiles", response=VALIDATION, errors=(501,), params=(CONTENT,)),
    Endpoint("POST", P, "create_profile", "Create a profile in the local store from its document",
             create_profile, "profiles", status=201, response=WRITE_RESULT, errors=(409, 501),
             params=(NAME, CONTENT)),
    Endpoint("PUT", P + "/{name}", "replace_profile", "Replace a profile of the local store (never creates)",
             replace_profile, "profiles", response=WRITE_RESULT, errors=(404, 501), params=(CONTENT,)),
    Endpoint("DELETE", P + "/{name}", "delete_profile", "Delete a profile of the local store",
             delete_profile, "profiles", status=204, response={"type": "object"}, errors=(404, 501)),
    Endpoint("GET", P + "/{name}/source", "profile_source", "A profile's document as stored, ${VAR} "
             "placeholders unresolved (what an editor should start from)", profile_source, "profiles",
             response=NAMED_TEXT, errors=(404, 501)),
    Endpoint("GET", "/skills/{skill}", "get_skill", "A skill's guide (Markdown body): the cao home's skills "
             "folder first, then cao's own skills", skill, "profiles", response=NAMED_TEXT,
             errors=(404, 501)),
    Endpoint("GET", "/settings/agent-dirs", "get_agent_dirs", "Where profiles are looked for: each "
             "provider's folder, extra folders, folders switched off", get_agent_dirs, "server",
             response=AGENT_DIRS, errors=(501,)),
    Endpoint("POST", "/settings/agent-dirs", "set_agent_dirs", "Move a provider's agent folder, set the "
             "extra folders or the folders switched off (each part optional; all checked before any is "
             "saved)",
             set_agent_dirs, "server", response=AGENT_DIRS, errors=(501,),
             params=(Param("agent_dirs", type="map", body_only=True,
                           description="provider name -> its agent folder (absolute or ~)"),
                     EXTRA_DIRS,
                     Param("disabled_dirs", type="list", body_only=True, strict=True, rule=_DIR_RULE,
                           description="configured folders to skip, replacing the list"))),
    Endpoint("GET", "/settings/skill-dirs", "get_skill_dirs", "The cao home's skills folder and the extra "
             "skill folders", get_skill_dirs, "server", response=SKILL_DIRS, errors=(501,)),
    Endpoint("POST", "/settings/skill-dirs", "set_skill_dirs", "Set the extra skill folders", set_skill_dirs,
             "server", response=SKILL_DIRS, errors=(501,), params=(EXTRA_DIRS,)),
    Endpoint("GET", "/.well-known/oauth-protected-resource", "oauth_protected_resource",
             "OAuth discovery (RFC 9728): always 404, cao has no OAuth server", oauth_resource, "server",
             response={"type": "object"}, errors=(404,)),
    Endpoint("GET", "/settings/memory", "memory_settings", "Whether memory is on: never, cao keeps none",
             memory_settings, "server", response=MEMORY),
)

__all__ = ["PROFILE_ENDPOINTS"]
