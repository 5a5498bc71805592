"""Hypothesis strategies for cao's data records (for plugin authors' property tests too)."""

from __future__ import annotations

import string

from hypothesis import strategies as st

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationRequest,
    DelegationResult,
    DeliveryReceipt,
    LaunchPlan,
    Message,
    MessageDraft,
    MessageState,
    OrchestrationType,
    OutputEvent,
    ProviderCapabilities,
    SessionInfo,
    StartupDialog,
    StatusReport,
    Terminal,
    TerminalInfo,
    TerminalLaunch,
    TerminalStatus,
)

terminal_ids = st.text(alphabet="0123456789abcdef", min_size=8, max_size=8)
names = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=1, max_size=64)
session_names = names.map(lambda n: "cao-" + n[:59])
texts = st.text(max_size=200)
timestamps = st.floats(min_value=0, max_value=4e9, allow_nan=False)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
string_maps = st.dictionaries(names, st.text(max_size=40), max_size=4)
tool_lists = st.none() | st.lists(names, max_size=4).map(tuple)

statuses = st.sampled_from(TerminalStatus)
message_states = st.sampled_from(MessageState)
orchestration_types = st.sampled_from(OrchestrationType)

status_reports = st.builds(StatusReport, status=statuses, evidence=texts, since=st.none() | timestamps)
capabilities = st.builds(
    ProviderCapabilities, accepts_input_while_busy=st.booleans(), handoff_banner=st.booleans(),
    native_status=st.booleans(), enter_count=st.integers(0, 3),
    submit_delay=st.floats(0, 2, allow_nan=False),
)
startup_dialogs = st.builds(StartupDialog, name=names, pattern=texts, keys=st.lists(names, max_size=3).map(tuple))
agent_profiles = st.builds(
    AgentProfile, name=names, description=texts, provider=st.none() | names, role=st.none() | names,
    model=st.none() | names, system_prompt=texts, allowed_tools=tool_lists,
    mcp_servers=st.dictionaries(names, st.dictionaries(st.text(max_size=10), json_values, max_size=3), max_size=2),
    tags=st.lists(names, max_size=3).map(tuple), extra=st.dictionaries(names, json_values, max_size=3),
    source=st.sampled_from(["built-in", "local", "installed", ""]),
)
terminals = st.builds(
    Terminal, id=terminal_ids, name=names, session_name=session_names, provider=names, agent_profile=names,
    working_directory=st.none() | texts, caller_id=st.none() | terminal_ids, allowed_tools=tool_lists,
    created_at=timestamps, status=statuses,
)
session_infos = st.builds(SessionInfo, name=session_names, status=st.sampled_from(["active", "detached"]),
                          working_directory=st.none() | texts)
terminal_infos = st.builds(
    TerminalInfo, terminal_id=terminal_ids, session_name=session_names, window_name=names, alive=st.booleans(),
    exit_status=st.none() | st.integers(0, 255), working_directory=st.none() | texts, metadata=string_maps,
)
terminal_launches = st.builds(
    TerminalLaunch, terminal_id=terminal_ids, session_name=session_names, window_name=names,
    working_directory=texts, argv=st.lists(texts, min_size=1, max_size=4).map(tuple), env=string_maps,
    metadata=string_maps, width=st.integers(10, 500), height=st.integers(5, 200),
)
output_events = st.builds(OutputEvent, terminal_id=terminal_ids, kind=st.sampled_from(["output", "exited", "lost"]),
                          data=st.binary(max_size=64), detail=texts)
launch_plans = st.builds(LaunchPlan, argv=st.lists(texts, min_size=1, max_size=4).map(tuple), env=string_maps,
                         files=string_maps)
message_drafts = st.builds(MessageDraft, sender_id=terminal_ids, receiver_id=terminal_ids, body=texts,
                           orchestration_type=orchestration_types, idempotency_key=st.none() | names)
messages = st.builds(
    Message, id=st.integers(1, 2**31), sender_id=terminal_ids, receiver_id=terminal_ids, body=texts,
    state=message_states, created_at=timestamps, updated_at=timestamps, orchestration_type=orchestration_types,
    attempts=st.integers(0, 10), last_error=st.none() | texts, idempotency_key=st.none() | names,
    not_before=st.none() | timestamps,
)
delivery_receipts = st.builds(DeliveryReceipt, message_id=st.integers(1, 2**31), terminal_id=terminal_ids,
                              delivered_at=timestamps, method=names)
create_terminal_requests = st.builds(
    CreateTerminalRequest, agent_profile=names, provider=st.none() | names, session_name=st.none() | session_names,
    working_directory=st.none() | texts, caller_id=st.none() | terminal_ids, allowed_tools=tool_lists,
    model=st.none() | names, yolo=st.booleans(), env=string_maps,
)
delegation_requests = st.builds(
    DelegationRequest, kind=orchestration_types, caller_id=st.none() | terminal_ids, agent_profile=names,
    message=texts, timeout=st.floats(1, 3600, allow_nan=False), working_directory=st.none() | texts,
)
delegation_results = st.builds(
    DelegationResult, kind=orchestration_types, success=st.booleans(), message=texts, agent_profile=names,
    caller_id=st.none() | terminal_ids, terminal_id=st.none() | terminal_ids, output=st.none() | texts,
    duration=st.floats(0, 1e5, allow_nan=False),
)

#: Every data record type with its strategy (the JSON round-trip test walks this).
DATA_RECORDS = {
    StatusReport: status_reports,
    ProviderCapabilities: capabilities,
    StartupDialog: startup_dialogs,
    AgentProfile: agent_profiles,
    Terminal: terminals,
    SessionInfo: session_infos,
    TerminalInfo: terminal_infos,
    TerminalLaunch: terminal_launches,
    OutputEvent: output_events,
    LaunchPlan: launch_plans,
    MessageDraft: message_drafts,
    Message: messages,
    DeliveryReceipt: delivery_receipts,
    CreateTerminalRequest: create_terminal_requests,
    DelegationRequest: delegation_requests,
    DelegationResult: delegation_results,
}
