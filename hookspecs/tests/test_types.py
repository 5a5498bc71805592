from cao_hookspecs import MessageState, TerminalStatus


def test_status_wire_values_match_upstream():
    assert [s.value for s in TerminalStatus] == [
        "unknown", "idle", "processing", "completed", "waiting_user_answer", "error"
    ]
    assert {s for s in TerminalStatus if s.ready} == {TerminalStatus.IDLE, TerminalStatus.COMPLETED}


def test_message_states():
    assert [s.value for s in MessageState] == ["pending", "delivering", "delivered", "failed", "dead", "uncertain"]
