"""Attribute, span and instrument names: the GenAI semantic conventions where one fits (an agent turn is
an agent invocation), ``cao.*`` for what only cao has (sessions, delegations, inbox deliveries)."""

from __future__ import annotations

# GenAI semantic conventions (agent spans).
OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
CONVERSATION = "gen_ai.conversation.id"
PROVIDER = "gen_ai.provider.name"
INVOKE_AGENT = "invoke_agent"
CREATE_AGENT = "create_agent"

SESSION = "cao.session"
TERMINAL = "cao.terminal.id"
CALLER = "cao.caller.id"
STATUS = "cao.status"
EVIDENCE = "cao.status.evidence"
KIND = "cao.orchestration.type"
SUCCESS = "cao.success"
MESSAGE = "cao.message.id"
SENDER = "cao.message.sender"
RECEIVER = "cao.message.receiver"
ATTEMPTS = "cao.message.attempts"
REASON = "cao.reason"
OPEN_AT_CLOSE = "cao.open_at_close"

# Instruments.
TURN_DURATION = "cao.turn.duration"
DELIVERY_LATENCY = "cao.delivery.latency"
LIVE_TERMINALS = "cao.terminals.live"
DELEGATIONS = "cao.delegations"

#: Evidence is the screen line or signal that decided a status; enough of it to read, never a screen.
EVIDENCE_LIMIT = 200
