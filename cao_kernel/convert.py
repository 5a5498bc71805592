"""cattrs converters: every data record to and from JSON-ready structures.

Records holding callables (``ProviderSpec``, ``BackendSpec``, ``InboxStoreSpec``, ``CommandSpec``) are
registrations, not data, and are not converted.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping
from typing import Any, TypeVar

import cattrs

T = TypeVar("T")


@functools.cache
def converter() -> cattrs.Converter:
    from cattrs.preconf.json import make_converter

    conv = make_converter()
    conv.register_unstructure_hook(types.MappingProxyType, lambda m: {k: _plain(v) for k, v in m.items()})
    return conv


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def to_json_data(record: Any) -> Any:
    """A record as plain dicts, lists, strings and numbers (enums become their wire values)."""
    return _plain(converter().unstructure(record))


def from_json_data(data: Any, cls: type[T]) -> T:
    """Rebuild a record of type ``cls``; raises ``cattrs`` errors naming the bad field."""
    return converter().structure(data, cls)
