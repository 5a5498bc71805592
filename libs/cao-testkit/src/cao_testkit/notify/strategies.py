"""Hypothesis strategies for a notifier's payload tests: notices of any size and content, and the
notices that ``describe`` builds from arbitrary cao records.

For tests only: it needs hypothesis, and the record strategies of ``cao_kernel.testing.strategies``
(imported when a strategy is built), as the tests that use it do.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from cao_notify_core.events import LEVELS, Notice, describe


def long_texts(alphabet: str = "😀é\n a") -> st.SearchStrategy[str]:
    """Any text up to 9000 characters, or a long one (at least 1000) drawn from ``alphabet``: put in it
    what the service must not split or must escape (emoji take two UTF-16 units)."""
    return st.text(max_size=9000) | st.text(alphabet=alphabet, min_size=1000, max_size=9000)


def notices(*, alphabet: str = "😀é\n a", max_fields: int = 40,
            field_value_size: int = 2000) -> st.SearchStrategy[Notice]:
    """Notices with texts of any length, up to ``max_fields`` fields, and any level (an unknown one
    too, which a service must show as ``info``)."""
    from cao_kernel.testing import strategies as cst

    texts = long_texts(alphabet)
    field = st.tuples(st.text(max_size=400), st.text(max_size=field_value_size))
    fields = st.lists(field, max_size=max_fields)
    return st.builds(Notice, kind=st.just("session_created"), title=texts, summary=texts,
                     fields=fields.map(tuple), level=st.sampled_from([*LEVELS, "strange"]), at=cst.timestamps,
                     body=texts)


def described_records() -> st.SearchStrategy[list[Notice]]:
    """For one draw of arbitrary records, the notices of the kinds that carry the most of them: a
    handoff, an assign, a new terminal and a dead message."""
    from cao_kernel.testing import strategies as cst

    def build(result: Any, terminal: Any, message: Any, reason: str) -> list[Notice]:
        events: list[tuple[str, dict[str, Any]]] = [
            ("handoff_finished", {"result": result}), ("assign_finished", {"result": result}),
            ("terminal_created", {"terminal": terminal}),
            ("message_dead", {"message": message, "reason": reason}),
        ]
        return [describe(kind, args, 1_700_000_000.5) for kind, args in events]

    return st.builds(build, cst.delegation_results, cst.terminals, cst.messages, cst.texts)
