import json

import pytest
from hypothesis import given, settings

from cao_kernel.convert import from_json_data, to_json_data
from cao_kernel.testing.strategies import DATA_RECORDS


@pytest.mark.parametrize("cls", list(DATA_RECORDS), ids=lambda c: c.__name__)
def test_every_data_record_survives_a_json_round_trip(cls):
    @settings(max_examples=40, deadline=None)
    @given(DATA_RECORDS[cls])
    def check(record):
        wire = json.loads(json.dumps(to_json_data(record)))
        assert from_json_data(wire, cls) == record

    check()


def test_enums_travel_as_upstream_wire_strings():
    from cao_hookspecs import Terminal

    data = to_json_data(Terminal(id="0123abcd", name="dev-1a2b", session_name="cao-x", provider="mock_cli",
                                 agent_profile="dev", status="completed"))
    assert data["status"] == "completed"
