"""What each provider declares about itself, checked the same way for both: it registers through its
entry point, and its version parser reads ``<binary> X.Y.Z`` and never raises. The expected versions,
the provider records and the other CLI's output refused are tested in each provider's package."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture
def enabled_plugins(case):
    return (case.name,)


def test_plugin_registers_through_its_entry_point(case, kernel):
    record = next(r for r in kernel.plugin_records() if r.name == case.name)
    assert record.status == "active" and record.distribution == case.package.replace("_", "-")
    assert kernel.providers[case.name].name == case.name


@given(st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 999)), st.text(max_size=30))
def test_version_parser_finds_the_version_and_never_raises(case, parts, noise):
    parse_version = importlib.import_module(f"{case.package}.provider").parse_version
    version = ".".join(map(str, parts))
    assert parse_version(f"{case.binary} {version}\n") == version
    found = parse_version(noise)
    assert found is None or found in noise
