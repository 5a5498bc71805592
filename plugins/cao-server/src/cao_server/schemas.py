"""JSON schemas (OpenAPI 3.0 dialect) of what the routes answer; ``wire`` writes exactly these shapes."""

from __future__ import annotations

from typing import Any

from cao_hookspecs.names import PROMPT_ID_PATTERN, TERMINAL_ID_PATTERN

STATUSES = ("unknown", "idle", "processing", "completed", "waiting_user_answer", "error")
MESSAGE_STATES = ("pending", "delivering", "delivered", "failed", "dead", "uncertain")
ORCHESTRATION_TYPES = ("send_message", "handoff", "assign")


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


STRING = {"type": "string"}
TIME = {"type": "string", "format": "date-time"}
PROMPT_KINDS = ("permission", "question", "choice", "confirmation", "startup_dialog")
OPTION_EFFECTS = ("allow", "allow_always", "deny", "answer", "other")
PROMPT_EVENTS = ("opened", "answered", "refused", "escalated", "closed")
_PROMPT = {
    "type": "object",
    "required": ["kind", "question", "options"],
    "properties": {
        "kind": {"type": "string", "enum": list(PROMPT_KINDS)},
        "question": STRING,
        "title": STRING,
        "tool": _nullable(STRING),
        "arguments": {"type": "object", "additionalProperties": STRING},
        "arguments_complete": {"type": "boolean"},
        "options": {"type": "array", "items": {
            "type": "object",
            "required": ["label", "keys", "effect"],
            "properties": {
                "label": STRING,
                "keys": {"type": "array", "items": STRING},
                "effect": {"type": "string", "enum": list(OPTION_EFFECTS)},
                "description": STRING,
                "takes_text": {"type": "boolean"},
            },
        }},
        "default": _nullable({"type": "integer", "description": "the option Enter takes now, from 1"}),
        "free_text": {"type": "boolean"},
        "evidence": {"type": "array", "items": STRING},
    },
}
_PATTERN = {"type": "string", "maxLength": 1000}
_TOOL_PATTERN = {**_PATTERN, "pattern": "^\\s*[^()\\s][^()]*(\\([\\s\\S]*\\))?\\s*$"}
_RULE_ACTIONS = ("allow", "allow_always", "deny", "ask", "answer")
#: A prompt policy as ``cao_hookspecs.prompt_policy`` reads it (the kernel checks it again and says why).
PROMPT_POLICY = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "rules": {"type": "array", "nullable": True, "maxItems": 200, "items": {
            "type": "object",
            "additionalProperties": False,
            "oneOf": [{"required": [action]} for action in _RULE_ACTIONS],
            "properties": {
                **{action: _TOOL_PATTERN for action in _RULE_ACTIONS[:-1]},
                "answer": {"oneOf": [{"type": "string", "pattern": "\\S"}, {"type": "integer"}]},
                "when": {**_PATTERN, "nullable": True},
                "kind": {"type": "string", "enum": [*PROMPT_KINDS, None], "nullable": True},
                "reason": STRING,
            },
        }},
        "timeout": {"type": "number", "exclusiveMinimum": True, "minimum": 0, "maximum": 604800,
                    "nullable": True},
        "on_timeout": {"type": "string", "enum": ["escalate", "default", "deny"]},
        "supervisor": {"type": "boolean", "nullable": True},
    },
}
_OPEN_PROMPT = {
    "type": "object",
    "required": ["id", "terminal_id", "prompt", "opened_at"],
    "properties": {
        "id": {"type": "string", "pattern": PROMPT_ID_PATTERN},
        "terminal_id": {"type": "string", "pattern": TERMINAL_ID_PATTERN},
        "prompt": _PROMPT,
        "opened_at": TIME,
    },
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": {
        "type": "object",
        "required": ["detail", "error"],
        "properties": {
            "detail": {"type": "string", "description": "one line saying what went wrong"},
            "error": {"type": "string", "description": "the error's class name (NotFound, InvalidInput...)"},
        },
    },
    "StepFailure": {
        "type": "object",
        "required": ["detail", "error"],
        "description": "a run-step whose worker failed (502) or ran long (504), as upstream answers it",
        "properties": {
            "detail": {
                "type": "object",
                "required": ["message", "kind", "terminal_id"],
                "properties": {
                    "message": {"type": "string"},
                    "kind": {"type": "string", "enum": ["error", "timeout"]},
                    "terminal_id": {"type": "string", "nullable": True, "description": "the kept worker"},
                },
            },
            "error": {"type": "string"},
        },
    },
    "Success": {
        "type": "object",
        "required": ["success"],
        "properties": {"success": {"type": "boolean"}},
    },
    "Health": {
        "type": "object",
        "required": ["status", "service", "terminal_backend"],
        "properties": {
            "status": {"type": "string", "enum": ["ok"]},
            "service": {"type": "string"},
            "version": {"type": "string"},
            "terminal_backend": {"type": "string"},
            "components": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    },
    "Terminal": {
        "type": "object",
        "required": ["id", "name", "provider", "session_name", "agent_profile", "status"],
        "properties": {
            "id": {"type": "string", "pattern": TERMINAL_ID_PATTERN},
            "name": {"type": "string", "description": "window name, <profile>-<4 hex>"},
            "provider": STRING,
            "session_name": STRING,
            "agent_profile": STRING,
            "caller_id": _nullable(STRING),
            "allowed_tools": _nullable({"type": "array", "items": STRING}),
            "status": {"type": "string", "enum": list(STATUSES)},
            "last_active": _nullable(TIME),
            "working_directory": _nullable(STRING),
            "created_at": _nullable(TIME),
            "backend": STRING,
            "prompt": {"allOf": [{"$ref": "#/components/schemas/OpenPrompt"}],
                       "description": "the prompt it waits on, while waiting (left out otherwise)"},
            "worktree_branch": {"type": "string", "description": "its git branch (use_worktree)"},
            "worktree_path": {"type": "string", "description": "its git worktree folder (use_worktree)"},
            "tmux_session": STRING,
            "tmux_window": STRING,
            "description": _nullable({**STRING, "maxLength": 64}),
            "group": _nullable({"type": "array", "items": {**STRING, "maxLength": 128}, "maxItems": 16}),
            "metadata": _nullable({"type": "object"}),
            "initial_delivery": {
                "type": "object",
                "description": "for a terminal created with an initial message: pending, delivered or failed",
                "required": ["state"],
                "properties": {
                    "state": {"type": "string", "enum": ["pending", "delivered", "failed"]},
                    "kind": STRING,
                    "message": STRING,
                },
            },
        },
    },
    "Session": {
        "type": "object",
        "required": ["id", "name", "status"],
        "properties": {
            "id": STRING,
            "name": STRING,
            "status": {"type": "string", "description": "active (a client is attached) or detached"},
            "working_directory": _nullable(STRING),
            "agent_profile": _nullable(STRING),
        },
    },
    "SessionDetail": {
        "type": "object",
        "required": ["session", "terminals"],
        "properties": {
            "session": {"$ref": "#/components/schemas/Session"},
            "terminals": {"type": "array", "items": {"$ref": "#/components/schemas/Terminal"}},
        },
    },
    "SessionDeleted": {
        "type": "object",
        "required": ["success", "deleted", "errors"],
        "properties": {
            "success": {"type": "boolean"},
            "deleted": {"type": "array", "items": STRING, "description": "ids of the deleted terminals"},
            "errors": {"type": "array", "items": STRING},
        },
    },
    "StatusReport": {
        "type": "object",
        "required": ["terminal_id", "status", "evidence"],
        "properties": {
            "terminal_id": STRING,
            "status": {"type": "string", "enum": list(STATUSES)},
            "evidence": {"type": "string", "description": "the detector rule that matched"},
            "since": _nullable(TIME),
        },
    },
    "TimelineEvent": {
        "type": "object",
        "required": ["name", "at", "detail"],
        "properties": {"name": STRING, "at": TIME,
                       "detail": {"type": "object", "additionalProperties": STRING}},
    },
    "Activity": {
        "type": "object",
        "required": ["kind", "data", "at"],
        "properties": {"kind": STRING, "data": {"type": "object"}, "at": TIME},
    },
    "Timeline": {
        "type": "object",
        "required": ["terminal_id", "events"],
        "properties": {"terminal_id": STRING,
                       "events": {"type": "array", "items": {"$ref": "#/components/schemas/TimelineEvent"}}},
    },
    "Output": {
        "type": "object",
        "required": ["output", "mode"],
        "properties": {"output": STRING, "mode": {"type": "string", "enum": ["full", "last"]}},
    },
    "WorkingDirectory": {
        "type": "object",
        "required": ["working_directory"],
        "properties": {"working_directory": _nullable(STRING)},
    },
    "Message": {
        "type": "object",
        "required": ["id", "sender_id", "receiver_id", "message", "status", "created_at"],
        "properties": {
            "id": {"type": "integer"},
            "sender_id": STRING,
            "receiver_id": STRING,
            "message": STRING,
            "status": {"type": "string", "enum": list(MESSAGE_STATES)},
            "created_at": TIME,
            "updated_at": _nullable(TIME),
            "orchestration_type": {"type": "string", "enum": list(ORCHESTRATION_TYPES)},
            "attempts": {"type": "integer"},
            "last_error": _nullable(STRING),
            "idempotency_key": _nullable(STRING),
            "not_before": _nullable(TIME),
        },
    },
    "MessageQueued": {
        "allOf": [
            {"$ref": "#/components/schemas/Message"},
            {
                "type": "object",
                "required": ["success", "message_id"],
                "properties": {"success": {"type": "boolean"}, "message_id": {"type": "integer"}},
            },
        ],
    },
    "DelegationResult": {
        "type": "object",
        "required": ["kind", "success", "message", "agent_profile"],
        "properties": {
            "kind": {"type": "string", "enum": ["handoff", "assign"]},
            "success": {"type": "boolean"},
            "message": {"type": "string", "description": "summary for the caller"},
            "agent_profile": STRING,
            "caller_id": _nullable(STRING),
            "terminal_id": _nullable(STRING),
            "output": _nullable({"type": "string", "description": "the worker's answer (handoff)"}),
            "duration": {"type": "number"},
            "worktree_branch": {"type": "string",
                                "description": "the worker's git branch (use_worktree); for a handoff only "
                                               "when it was kept for the commits or changes in it"},
            "worktree_path": {"type": "string", "description": "the worker's git worktree (as the branch)"},
        },
    },
    "HandoffResult": {
        "type": "object",
        "required": ["job_id", "state", "created_at", "updated_at"],
        "properties": {
            "job_id": STRING,
            "state": {"type": "string", "enum": ["running", "completed", "error"]},
            "terminal_id": _nullable(STRING),
            "last_message": _nullable({"type": "string", "description": "the worker's answer (completed)"}),
            "error_message": _nullable({"type": "string", "description": "why it failed (error)"}),
            "created_at": TIME,
            "updated_at": TIME,
            "agent_profile": _nullable(STRING),
            "caller_id": _nullable(STRING),
        },
    },
    "AgentProfile": {
        "type": "object",
        "required": ["name"],
        "additionalProperties": True,
        "properties": {
            "name": STRING,
            "description": STRING,
            "provider": STRING,
            "role": STRING,
            "model": STRING,
            "system_prompt": STRING,
            "allowed_tools": {"type": "array", "items": STRING},
            "mcp_servers": {"type": "object"},
            "capabilities": {"type": "array", "items": STRING},
            "tags": {"type": "array", "items": STRING},
            "source": STRING,
            "path": STRING,
            "extra": {"type": "object"},
        },
    },
    "ProfileSummary": {
        "allOf": [
            {"$ref": "#/components/schemas/AgentProfile"},
            {"type": "object", "required": ["loadable"], "properties": {"loadable": {"type": "boolean"}}},
        ],
    },
    "Provider": {
        "type": "object",
        "required": ["name", "binary", "installed"],
        "additionalProperties": True,
        "properties": {"name": STRING, "binary": STRING, "installed": {"type": "boolean"}},
    },
    "McpTool": {
        "type": "object",
        "required": ["name", "description"],
        "properties": {"name": STRING, "description": STRING},
    },
    "McpToolResult": {
        "type": "object",
        "required": ["result"],
        "properties": {"result": {"nullable": True}},
    },
    "OpenPrompt": _OPEN_PROMPT,
    "PromptEvent": {
        "type": "object",
        "required": ["kind", "prompt", "at"],
        "properties": {
            "kind": {"type": "string", "enum": list(PROMPT_EVENTS)},
            "prompt": {"$ref": "#/components/schemas/OpenPrompt"},
            "at": TIME,
            "by": STRING,
            "option": _nullable({"type": "integer"}),
            "text": _nullable(STRING),
            "detail": STRING,
        },
    },
    "PromptAnswered": {
        "type": "object",
        "required": ["success", "event"],
        "properties": {"success": {"type": "boolean"}, "event": {
            "nullable": True, "allOf": [{"$ref": "#/components/schemas/PromptEvent"}],
            "description": "the answer as recorded; null when no prompt could be read and text was typed"}},
    },
    "OpenPromptAnswer": {
        "type": "object",
        "required": ["terminal_id", "status", "prompt"],
        "properties": {"terminal_id": STRING, "status": {"type": "string", "enum": list(STATUSES)},
                       "prompt": {"nullable": True, "allOf": [{"$ref": "#/components/schemas/OpenPrompt"}]}},
    },
    "PromptPolicyAnswer": {
        "type": "object",
        "required": ["session_name", "policy"],
        "properties": {"session_name": STRING, "policy": {"type": "object", "nullable": True}},
    },
    "InstallResult": {
        "type": "object",
        "required": ["success", "message", "agent_name"],
        "properties": {
            "success": {"type": "boolean"},
            "message": STRING,
            "agent_name": STRING,
            "agent_file": _nullable(STRING),
            "context_file": _nullable(STRING),
            "unresolved_vars": {"type": "array", "items": STRING},
            "source_kind": _nullable(STRING),
            "provider": _nullable(STRING),
        },
    },
}


def ref(name: str) -> dict[str, Any]:
    if name not in SCHEMAS:
        raise KeyError(f"no schema named {name!r}")
    return {"$ref": f"#/components/schemas/{name}"}


def array_of(name: str) -> dict[str, Any]:
    return {"type": "array", "items": ref(name)}


__all__ = ["MESSAGE_STATES", "ORCHESTRATION_TYPES", "SCHEMAS", "STATUSES", "array_of", "ref"]
