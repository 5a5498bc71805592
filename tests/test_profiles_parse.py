"""Profile parsing: upstream's Markdown + YAML frontmatter <-> AgentProfile, field rules, round trips."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile
from cao_kernel.errors import InvalidInput, NotFound
from cao_kernel.profiles.parse import (
    load_profile_file,
    parse_profile_text,
    profile_to_dict,
    serialize_profile,
    split_frontmatter,
)
from cao_kernel.profiles.validate import FIELDS, MAX_PROFILE_BYTES, NAME_RE, RESERVED_KEYS

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "data_analyst.md"

FULL = """\
---
name: full
description: every field upstream knows
provider: claude_code
role: developer
model: sonnet
allowedTools: ["@builtin", fs_read]
capabilities: [analyse data]
tags: [data, stats_1]
skills: []
mcpServers:
  cao-mcp-server: {type: stdio, command: cao-mcp-server, args: [], timeout: 5}
tools: ["*"]
toolAliases: {read: fs_read}
toolsSettings: {fs_write: {allowedPaths: [src]}}
resources: ["file://README.md"]
hooks: {agentSpawn: [{command: date}]}
useLegacyMcpJson: false
prompt: extra prompt
engine: kas
permissionMode: acceptEdits
native_agent: helper
codexProfile: fast
codexConfig: {model_reasoning_effort: high}
claudeConfig: {effort: high}
hermesProfile: hermes-dev
provider_init_timeout: 90
container: {path_maps: [{host: /a, guest: /b}]}
grokNativeWorkflows: true
x-future: {nested: [1, 2]}
---

  Body line one.

Body line two.
"""


def test_every_known_field_maps_to_its_attribute_and_unknown_keys_are_kept() -> None:
    p = parse_profile_text(FULL, source="custom", path="/x/full.md")
    assert p.name == "full" and p.description == "every field upstream knows"
    assert (p.provider, p.role, p.model) == ("claude_code", "developer", "sonnet")
    assert p.allowed_tools == ("@builtin", "fs_read")
    assert p.capabilities == ("analyse data",) and p.tags == ("data", "stats_1")
    assert p.skills == ()  # an explicit empty list (no skills) differs from omitted (all skills)
    assert p.mcp_servers["cao-mcp-server"]["command"] == "cao-mcp-server"
    assert p.tools == ("*",) and p.tool_aliases == {"read": "fs_read"}
    assert p.tools_settings == {"fs_write": {"allowedPaths": ["src"]}}
    assert p.resources == ("file://README.md",) and p.hooks == {"agentSpawn": [{"command": "date"}]}
    assert p.use_legacy_mcp_json is False and p.prompt == "extra prompt"
    assert (p.engine, p.permission_mode, p.native_agent) == ("kas", "acceptEdits", "helper")
    assert (p.codex_profile, p.codex_config) == ("fast", {"model_reasoning_effort": "high"})
    assert p.claude_config == {"effort": "high"} and p.hermes_profile == "hermes-dev"
    assert p.provider_init_timeout == 90 and p.container == {"path_maps": [{"host": "/a", "guest": "/b"}]}
    assert dict(p.extra) == {"grokNativeWorkflows": True, "x-future": {"nested": [1, 2]}}
    assert p.system_prompt == "Body line one.\n\nBody line two."
    assert (p.source, p.path) == ("custom", "/x/full.md")


def test_full_profile_round_trips_with_unknown_fields() -> None:
    p = parse_profile_text(FULL)
    text = serialize_profile(p)
    assert "grokNativeWorkflows: true" in text and "x-future:" in text
    assert parse_profile_text(text) == p


def test_upstream_example_fixture_parses() -> None:
    p = load_profile_file(FIXTURE)
    assert p.name == "data_analyst" and p.role == "developer" and p.skills == ("cao-worker-protocols",)
    server = p.mcp_servers["cao-mcp-server"]
    assert server["command"] == "uvx" and server["args"][-1] == "cao-mcp-server"
    assert p.system_prompt.startswith("# Data analyst")
    assert parse_profile_text(serialize_profile(p), source="custom", path=str(FIXTURE)) == p


def test_defaults_when_fields_are_absent() -> None:
    p = parse_profile_text("---\nname: bare\n---\n")
    assert p == AgentProfile(name="bare")
    assert p.mcp_servers == {} and p.capabilities == () and p.allowed_tools is None
    # An empty "description:" line is YAML null: no description, like upstream's default.
    assert parse_profile_text("---\nname: bare\ndescription:\n---\n").description == ""


def test_missing_name_defaults_to_the_file_stem_only_when_loading_a_file(tmp_path: Path) -> None:
    nested = tmp_path / "helper"
    nested.mkdir()
    (nested / "agent.md").write_text("---\ndescription: d\n---\nhi\n")
    (tmp_path / "plain.md").write_text("no frontmatter at all\n")
    assert load_profile_file(nested / "agent.md").name == "helper"
    plain = load_profile_file(tmp_path / "plain.md")
    assert (plain.name, plain.system_prompt, plain.source) == ("plain", "no frontmatter at all", "custom")
    with pytest.raises(InvalidInput, match=r"<text>: frontmatter has no 'name' field"):
        parse_profile_text("---\ndescription: d\n---\nhi\n")
    (tmp_path / "bad name.md").write_text("hello\n")
    with pytest.raises(InvalidInput, match="taken from the file name"):
        load_profile_file(tmp_path / "bad name.md")


def test_leading_blank_lines_html_comments_bom_and_crlf() -> None:
    text = "\ufeff\n<!-- generated -->\n\n---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n"
    p = parse_profile_text(text)
    assert (p.name, p.description, p.system_prompt) == ("x", "d", "body")


def test_byte_order_mark_without_frontmatter(tmp_path: Path) -> None:
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbfJust a prompt.\n")
    assert load_profile_file(tmp_path / "bom.md").system_prompt == "Just a prompt."


def test_body_may_contain_dashes_lines() -> None:
    p = parse_profile_text("---\nname: x\n---\nabove\n---\nbelow\n")
    assert p.system_prompt == "above\n---\nbelow"


def test_split_frontmatter_without_frontmatter_returns_whole_text() -> None:
    assert split_frontmatter("# Title\n---\n") == (None, "# Title\n---\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: x\n", r"opened with '---' is never closed"),
        ("---\nname: [x\n---\n", r"malformed YAML frontmatter \(frontmatter line \d+\)"),
        ("---\n- a\n- b\n---\n", r"frontmatter must be a mapping of fields \(got list\)"),
        ("---\nname: x\n1: y\n---\n", r"frontmatter key 1 is not a string"),
        ("---\nname: a/b\n---\n", r"field 'name' 'a/b' must not contain"),
        ("---\nname: ../up\n---\n", r"field 'name' '\.\./up' must not contain"),
        ("---\nname: has space\n---\n", r"field 'name' 'has space' is invalid"),
        ("---\nname: " + "n" * 65 + "\n---\n", r"field 'name' .* is invalid"),
        ("---\nname: 12\n---\n", r"field 'name' must be a string \(got int\)"),
        ("---\nname: x\ndescription: " + "d" * 1025 + "\n---\n", r"field 'description' is 1025 characters"),
        ("---\nname: x\ndescription: [d]\n---\n", r"field 'description' must be a string \(got list\)"),
        ("---\nname: x\nallowedTools: fs_read\n---\n", r"field 'allowedTools' must be a list of strings"),
        ("---\nname: x\ntags: [ok, not ok]\n---\n", r"field 'tags' item 1 'not ok' must be"),
        ("---\nname: x\ncapabilities: [" + ", ".join(["c"] * 33) + "]\n---\n", r"has 33 items"),
        ("---\nname: x\ncapabilities: [" + "c" * 129 + "]\n---\n", r"item 0 is 129 characters"),
        ("---\nname: x\nmcpServers: [a]\n---\n", r"field 'mcpServers' must be a mapping \(got list\)"),
        ("---\nname: x\nmcpServers: {s: {args: ls}}\n---\n", r"entry 's': 'args' must be a list"),
        ("---\nname: x\nmcpServers: {s: 3}\n---\n", r"entry 's' must be a mapping"),
        ("---\nname: x\nuseLegacyMcpJson: 'yes'\n---\n", r"field 'useLegacyMcpJson' must be true or false"),
        ("---\nname: x\nengine: v3\n---\n", r"field 'engine' 'v3' is not one of v2, kas"),
        ("---\nname: x\npermissionMode: yolo\n---\n", r"field 'permissionMode' 'yolo' is not one of"),
        ("---\nname: x\ncodexProfile: ''\n---\n", r"field 'codexProfile' must not be empty"),
        (
            "---\nname: x\nprovider_init_timeout: 0\n---\n",
            r"field 'provider_init_timeout' must be at least 1",
        ),
        ("---\nname: x\nprovider_init_timeout: true\n---\n", r"must be an integer \(got bool\)"),
        ("---\nname: x\ncontainer: {path_maps: [{host: /a}]}\n---\n", r"'path_maps' item 0 must be"),
        ("---\nname: x\nsystem_prompt: hi\n---\n", r"field 'system_prompt' is not allowed in frontmatter"),
        ("---\nname: x\nextra: {}\n---\n", r"field 'extra' is not allowed"),
        ("---\nname: x\nnote: &a [*a]\n---\n", r"nested deeper than 32 levels"),
        ("---\nname: x\nnote: " + "[" * 40 + "]" * 40 + "\n---\n", r"nested deeper than 32 levels"),
        ("---\nname: x\n---\nnul \0 here", r"contains a NUL character"),
    ],
)
def test_bad_profiles_give_one_line_errors_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as info:
        parse_profile_text(text)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("<text>: ")


def test_alias_bomb_is_refused_without_expanding_it() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    text = "---\nname: bomb\n" + "\n".join(lines) + "\n---\n"
    with pytest.raises(InvalidInput, match="more than 20000 values"):
        parse_profile_text(text)


def test_size_limit() -> None:
    body = "x" * (MAX_PROFILE_BYTES - 20)
    assert parse_profile_text("---\nname: x\n---\n" + body).system_prompt == body
    with pytest.raises(InvalidInput, match=f"the limit is {MAX_PROFILE_BYTES}"):
        parse_profile_text("---\nname: x\n---\n" + "x" * MAX_PROFILE_BYTES)


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no such file"):
        load_profile_file(tmp_path / "missing.md")
    (tmp_path / "latin.md").write_bytes(b"---\nname: x\n---\ncaf\xe9\n")
    with pytest.raises(InvalidInput, match=r"latin\.md: not UTF-8 text \(bad byte at offset 19\)"):
        load_profile_file(tmp_path / "latin.md")
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(InvalidInput, match="is a directory"):
        load_profile_file(tmp_path / "dir.md")


def test_env_substitution_in_frontmatter_strings_and_body() -> None:
    text = (
        "---\nname: x\nmcpServers:\n  s: {command: run, env: {TOKEN: '${TOKEN}'}}\n---\n"
        "key ${TOKEN} ${MISSING} $TOKEN\n"
    )
    unresolved: set[str] = set()
    p = parse_profile_text(text, env={"TOKEN": "a#b: c"}, unresolved=unresolved)
    # The value is substituted after YAML parsing, so '#' and ': ' in it cannot change the structure.
    assert p.mcp_servers["s"]["env"]["TOKEN"] == "a#b: c"
    assert p.system_prompt == "key a#b: c ${MISSING} $TOKEN"
    assert unresolved == {"MISSING"}
    assert parse_profile_text(text).system_prompt == "key ${TOKEN} ${MISSING} $TOKEN"


def test_profile_to_dict_uses_upstream_keys_and_drops_unset_fields() -> None:
    data = profile_to_dict(parse_profile_text(FULL, source="local", path="/p.md"))
    assert data["allowedTools"] == ["@builtin", "fs_read"] and data["permissionMode"] == "acceptEdits"
    assert data["system_prompt"].startswith("Body") and data["source"] == "local" and data["path"] == "/p.md"
    bare = profile_to_dict(AgentProfile(name="b"))
    assert bare == {"name": "b", "description": "", "system_prompt": ""}


def test_serializer_refuses_extra_keys_that_would_not_parse_back() -> None:
    with pytest.raises(InvalidInput, match="extra field 'allowedTools' cannot be written"):
        serialize_profile(AgentProfile(name="x", extra={"allowedTools": ["a"]}))
    with pytest.raises(InvalidInput, match="cannot be written as YAML"):
        serialize_profile(AgentProfile(name="x", extra={"obj": object()}))


# -- properties -----------------------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
_names = st.from_regex(NAME_RE, fullmatch=True)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    _text,
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_str_lists = st.lists(_text, max_size=5)


def _optional(strategy: st.SearchStrategy) -> st.SearchStrategy:
    return st.none() | strategy


_mcp_server = st.fixed_dictionaries(
    {"type": st.just("stdio"), "command": _text},
    optional={
        "args": _str_lists,
        "env": st.dictionaries(_text, _text, max_size=3),
        "timeout": st.integers(1),
    },
)

_profiles = st.builds(
    AgentProfile,
    name=_names,
    description=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=1024
    ),
    provider=_optional(_text),
    role=_optional(_text),
    model=_optional(_text),
    system_prompt=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300
    ).map(str.strip),
    allowed_tools=_optional(_str_lists),
    mcp_servers=st.dictionaries(_text, _mcp_server, max_size=3),
    tools=_optional(_str_lists),
    tool_aliases=_optional(st.dictionaries(_text, _json, max_size=3)),
    tools_settings=_optional(st.dictionaries(_text, _json, max_size=3)),
    resources=_optional(_str_lists),
    hooks=_optional(st.dictionaries(_text, _json, max_size=3)),
    use_legacy_mcp_json=_optional(st.booleans()),
    prompt=_optional(_text),
    capabilities=st.lists(st.text(max_size=128).filter(lambda s: "\x00" not in s), max_size=32).filter(
        lambda items: not any(any(0xD800 <= ord(c) <= 0xDFFF for c in s) for s in items)
    ),
    tags=st.lists(_names, max_size=32),
    skills=_optional(_str_lists),
    engine=_optional(st.sampled_from(["v2", "kas"])),
    permission_mode=_optional(
        st.sampled_from(["default", "acceptEdits", "plan", "auto", "bypassPermissions"])
    ),
    native_agent=_optional(_text),
    codex_profile=_optional(_text.filter(bool)),
    codex_config=_optional(st.dictionaries(_text, _json, max_size=3)),
    claude_config=_optional(st.dictionaries(_text, _json, max_size=3)),
    hermes_profile=_optional(_text),
    provider_init_timeout=_optional(st.integers(min_value=1)),
    container=_optional(st.dictionaries(_text.filter(lambda k: k != "path_maps"), _json, max_size=3)),
    extra=st.dictionaries(
        _text.filter(lambda k: k not in FIELDS and k not in RESERVED_KEYS), _json, max_size=4
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_profiles)
def test_valid_profiles_round_trip_through_serialize_and_parse(profile: AgentProfile) -> None:
    assert parse_profile_text(serialize_profile(profile)) == profile


_any_key = st.sampled_from(sorted(FIELDS) + sorted(RESERVED_KEYS)) | _text | st.integers()
_any_value = st.recursive(
    _scalars | st.dates(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_any_key, _any_value, max_size=8), st.sampled_from(["", "body", "\n---\nmore"]))
def test_arbitrary_frontmatter_raises_nothing_but_invalid_input(meta: dict, body: str) -> None:
    text = "---\n" + yaml.safe_dump(meta, allow_unicode=True) + "---\n" + body
    try:
        profile = parse_profile_text(text, default_name="fallback")
    except InvalidInput as exc:
        assert "\n" not in str(exc)
    else:
        assert NAME_RE.match(profile.name)
        assert parse_profile_text(serialize_profile(profile)) == profile


_profile_chars = st.sampled_from(
    list("-:\n \t[]{}&*!|>'\"#%@`,?") + list(string.ascii_letters[:6]) + ["\r", "\ufeff"]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.text(_profile_chars, max_size=120).map(lambda s: "---\n" + s)))
def test_arbitrary_text_raises_nothing_but_invalid_input(text: str) -> None:
    try:
        parse_profile_text(text, default_name="fallback")
    except InvalidInput as exc:
        assert "\n" not in str(exc)
