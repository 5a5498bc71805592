"""cao's records and their JSON form, both ways, through one cattrs converter.

Every record that crosses a process boundary as JSON (HTTP answers and bodies, the event stream, the
commands' ``--json`` output, MCP tool answers) goes out through :func:`to_json` and comes back through
:func:`from_json`. A record goes out field by field in the order attrs lists them; the table below says
only where the JSON differs from the record. Field names follow upstream where upstream has the field
(a message's text is ``message`` and its state ``status``); fields upstream lacks are added, never
renamed. Times, held as Unix floats, are ISO 8601 strings in UTC with microseconds.

The converter costs nothing until it is used: cattrs is imported on the first conversion, and the
functions of a record class are generated the first time a record of that class is converted, so a
command that reads a few terminals pays for terminals only.
"""

from __future__ import annotations

import datetime as _dt
import enum
import functools
import types
import typing
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from cao_hookspecs import (
    Activity,
    AgentProfile,
    CreateTerminalRequest,
    DelegationResult,
    HandoffJob,
    McpToolSpec,
    Message,
    OpenPrompt,
    PromptEvent,
    StatusReport,
    Terminal,
    TimelineEvent,
)

if TYPE_CHECKING:
    import cattrs

R = TypeVar("R")


# -- times -----------------------------------------------------------------------------------------


def iso(ts: float | None) -> str | None:
    """A Unix time as an ISO 8601 string in UTC with microseconds (None stays None)."""
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat(timespec="microseconds")


def from_iso(value: Any) -> float | None:
    """Read back a time written by :func:`iso` (a plain number is taken as a Unix time)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    parsed = _dt.datetime.fromisoformat(str(value))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.UTC)
    return parsed.timestamp()


def _iso_if_set(ts: float) -> str | None:
    """Write a time whose ``0.0`` means "never" (the JSON says null)."""
    return iso(ts) if ts else None


def _time_or_zero(value: Any, _type: Any) -> float:
    """Read a time the record holds as a float, ``0.0`` when the JSON has none."""
    return from_iso(value) or 0.0


def _time_or_none(value: Any, _type: Any) -> float | None:
    """Read a time the record may hold as None."""
    return from_iso(value)


# -- where the JSON differs from the records -------------------------------------------------------

# A field's type says a float, not that it is a time (a delegation's duration is not), so time fields
# are named here, each with how it is written and read.
_TIME = {"unstruct_hook": iso, "struct_hook": _time_or_zero}
_TIME_OR_NEVER = {"unstruct_hook": _iso_if_set, "struct_hook": _time_or_zero}
_OPTIONAL_TIME = {"unstruct_hook": iso, "struct_hook": _time_or_none}

_FIELDS: dict[type, dict[str, dict[str, Any]]] = {
    # A prompt is written only while there is one, so the JSON of everything else is as it always was.
    # So are a worktree's branch and folder, for terminals and delegations started in one.
    Terminal: {"created_at": _TIME_OR_NEVER, "prompt": {"omit_if_default": True},
               "worktree_branch": {"omit_if_default": True}, "worktree_path": {"omit_if_default": True}},
    DelegationResult: {"worktree_branch": {"omit_if_default": True},
                       "worktree_path": {"omit_if_default": True}},
    StatusReport: {"since": _OPTIONAL_TIME, "prompt": {"omit_if_default": True}},
    OpenPrompt: {"opened_at": _TIME},
    PromptEvent: {"at": _TIME},
    TimelineEvent: {"at": _TIME},
    Activity: {"at": _TIME},
    HandoffJob: {"created_at": _TIME, "updated_at": _TIME},
    Message: {
        "body": {"rename": "message"},
        "state": {"rename": "status"},
        "created_at": _TIME,
        "updated_at": _TIME_OR_NEVER,
        "not_before": _OPTIONAL_TIME,
    },
    # The creation routes' parameter, named as upstream names it (and left out when empty); a worktree
    # is asked for only when wanted, so bodies without one read as they always did.
    CreateTerminalRequest: {"env": {"rename": "env_vars", "omit_if_default": True},
                            "use_worktree": {"omit_if_default": True},
                            "worktree_changes": {"omit_if_default": True}},
    # A tool's function runs where it was registered; the wire lists its name and description.
    McpToolSpec: {"factory": {"omit": True}},
}
# Records whose unset (None) fields are left out, as upstream leaves them out of a profile.
_UNSET_LEFT_OUT = frozenset({AgentProfile})


# -- the converter ---------------------------------------------------------------------------------


def to_json(value: Any) -> Any:
    """``value`` as plain JSON data: a record, or mappings, sequences, enums and dates holding records
    (anything else JSON cannot hold goes out as its text)."""
    return converter().unstructure(value)


def to_json_fields(record: Any, names: Iterable[str]) -> dict[str, Any]:
    """Some of ``record``'s fields, by their JSON names, as :func:`to_json` writes them (upstream answers
    some requests with a few fields of a record)."""
    data = to_json(record)
    return {name: data[name] for name in names}


def from_json(data: Mapping[str, Any], cls: type[R]) -> R:
    """A ``cls`` record from its JSON form. Keys that are not its fields are ignored; a field that is
    absent, or null where the record cannot hold None, takes the record's default."""
    return converter().structure(data, cls)


@functools.cache
def converter() -> cattrs.Converter:
    """The converter, built on first use: hooks for the values JSON has no type for, and factories that
    generate a record class's functions the first time that class is converted."""
    import collections.abc

    import cattrs

    conv = cattrs.Converter(
        # Plain errors (a field's or the record's own) instead of exception groups: nobody here reports
        # errors field by field, and the generated functions stay short.
        detailed_validation=False,
        # The records' own converters rebuild enums, tuples and frozen mappings from JSON values.
        prefer_attrib_converters=True,
        unstruct_collection_overrides={collections.abc.Sequence: list, collections.abc.Set: list},
        unstructure_fallback_factory=_as_text_unless_scalar,
    )
    # StrEnum too: str's own hook (identity) would otherwise be found first in its MRO.
    for cls in (enum.Enum, enum.StrEnum):
        conv.register_unstructure_hook(cls, _enum_value)
    for cls in (_dt.date, _dt.time):  # a datetime is a date
        conv.register_unstructure_hook(cls, _isoformat)
    conv.register_unstructure_hook(bytes, str)
    conv.register_unstructure_hook_func(_is_mapping, _mapping_writer(conv))
    conv.register_unstructure_hook_factory(attrs.has, lambda cls: _record_writer(conv, cls))
    conv.register_structure_hook_factory(attrs.has, lambda cls: _record_reader(conv, cls))
    return conv


def _enum_value(member: enum.Enum) -> Any:
    """An enum member as its wire value (upstream's lowercase names for cao's own enums)."""
    return member.value


def _isoformat(value: _dt.date | _dt.time) -> str:
    """A date or time from a YAML profile, as ISO 8601 text."""
    return value.isoformat()


def _as_text_unless_scalar(cls: Any) -> Any:
    """The fallback hook: numbers, booleans and None go as they are, any other type as its text."""
    from cattrs.fns import identity

    if isinstance(cls, type) and issubclass(cls, (int, float, types.NoneType)):
        return identity
    return str


def _is_mapping(cls: Any) -> bool:
    origin = typing.get_origin(cls) or cls
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _mapping_writer(conv: cattrs.Converter) -> Any:
    def unstructure_mapping(value: Mapping[Any, Any]) -> dict[str, Any]:
        """A mapping as a JSON object: keys as text (a YAML key may be a number), values converted."""
        return {str(key): conv.unstructure(item) for key, item in value.items()}

    return unstructure_mapping


def _overrides(cls: type) -> dict[str, Any]:
    """The cattrs overrides of ``cls``'s fields, from the table above."""
    from cattrs.gen import override

    return {name: override(**options) for name, options in _FIELDS.get(cls, {}).items()}


def _record_writer(conv: cattrs.Converter, cls: type) -> Any:
    """The generated function that writes a ``cls`` record as a dict."""
    from cattrs.gen import make_dict_unstructure_fn

    attrs.resolve_types(cls)
    generated = make_dict_unstructure_fn(cls, conv, _cattrs_use_linecache=False, **_overrides(cls))
    if cls not in _UNSET_LEFT_OUT:
        return generated

    # Filtered afterwards, not with cattrs' omit_if_default, which would move the fields that are set
    # behind all the others.
    def unstructure_without_unset(record: Any) -> dict[str, Any]:
        return {k: v for k, v in generated(record).items() if v is not None}

    return unstructure_without_unset


def _record_reader(conv: cattrs.Converter, cls: type) -> Any:
    """The generated function that reads a ``cls`` record from a dict, behind a filter that turns null
    into "absent" for fields that cannot hold None (upstream sends null for what it does not set)."""
    from cattrs.gen import make_dict_structure_fn

    attrs.resolve_types(cls)
    overrides = _overrides(cls)
    generated = make_dict_structure_fn(cls, conv, _cattrs_use_linecache=False, **overrides)
    renamed = {name: option.rename for name, option in overrides.items() if option.rename}
    nullable = frozenset(renamed.get(f.name, f.name) for f in attrs.fields(cls) if _admits_none(f.type))

    def structure_record(data: Mapping[str, Any], _cls: Any) -> Any:
        return generated({k: v for k, v in data.items() if v is not None or k in nullable}, _cls)

    return structure_record


def _admits_none(annotation: Any) -> bool:
    return annotation is Any or types.NoneType in typing.get_args(annotation)


__all__ = ["converter", "from_iso", "from_json", "iso", "to_json", "to_json_fields"]
