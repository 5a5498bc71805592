"""Reports with evidence of a loggable length, and detectors that never raise."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import StatusReport, TerminalStatus
from cao_screen_core.reports import EVIDENCE_LENGTH, pending_reader, read_safely, report


@given(st.text(max_size=400))
def test_evidence_is_cut_to_its_length(evidence):
    made = report(TerminalStatus.IDLE, evidence)
    assert made.status == TerminalStatus.IDLE
    assert made.evidence == evidence[:EVIDENCE_LENGTH]


def test_a_detector_that_raises_reads_unknown_naming_the_exception():
    def broken(screen: str) -> StatusReport:
        raise IndexError(f"row {len(screen)}")

    assert read_safely(broken, "abc") == StatusReport(status=TerminalStatus.UNKNOWN,
                                                      evidence="screen not understood: IndexError('row 3')")


def test_a_detector_that_answers_is_passed_through():
    answer = StatusReport(status=TerminalStatus.COMPLETED, evidence="done")
    assert read_safely(lambda screen: answer, "") is answer


def test_a_pending_reader_reads_the_parsed_screen_and_never_raises():
    class Parsed:
        def __init__(self, text: str) -> None:
            if text == "broken":
                raise IndexError("no such row")
            self.pending_input = text.upper()

    pending = pending_reader(Parsed)
    assert pending("typed") == "TYPED"
    assert pending("broken") == ""
