"""``HttpKernel``: the ``KernelAPI`` over HTTP, for the CLI, the MCP server and embedding apps.

Every method calls one route of a running ``cao-server`` and returns the same records the in-process
kernel returns; an error answer is raised again as the server's error class (``NotFound``,
``InvalidInput``, ``Conflict``...). Requests carry their values in a JSON body, never in the URL.

Use one ``HttpKernel`` from one event loop, and ``await client.aclose()`` (or ``async with``) when done.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from cao_hookspecs import Activity, HandoffJob, PromptEvent, ProviderInfo, TimelineEvent
from cao_hookspecs.errors import CaoError, InvalidInput, Timeout
from cao_hookspecs.handoff_jobs import job_id_problem

from . import validation, wire
from .converter import from_json
from .errors import ServerNotRunning, error_class
from .settings import DEFAULT_HOST, DEFAULT_PORT, advertised_host, base_url, home_dir

if TYPE_CHECKING:
    import httpx
    from cao_hookspecs import (
        AgentProfile,
        CreateTerminalRequest,
        DelegationResult,
        McpToolSpec,
        Message,
        MessageState,
        SessionInfo,
        StatusReport,
        Terminal,
        TerminalStatus,
    )

# Creating a terminal may wait for the agent's start-up (its own timeout applies on the server).
CREATE_TIMEOUT = 900.0
# Past the handoff's own timeout, the worker's answer still has to be read and the worker removed.
HANDOFF_MARGIN = 120.0
# The server's longest single wait; longer waits are split.
MAX_WAIT = 3600.0


def _terminal_id(value: str) -> str:
    # Checked here too: an id holding '/' would otherwise reach another route once the URL is decoded.
    if not isinstance(value, str) or not validation.TERMINAL_ID_RE.match(value):
        raise InvalidInput(f"invalid terminal id {value!r}: expected 8 lowercase hex characters")
    return value


def _message_id(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"invalid message id {value!r}: a positive integer")
    return value


def _session(value: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"invalid session name {value!r}")
    return quote(validation.session_name(value), safe="")


def _profile(value: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"invalid agent profile name {value!r}")
    return quote(validation.profile_name(value), safe="")


def _body(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _worktree_fields(use_worktree: bool, worktree_changes: bool) -> dict[str, bool]:
    # Sent only when asked for: a server that predates worktrees then serves the call as before.
    return {name: True for name, wanted in (("use_worktree", use_worktree),
                                             ("worktree_changes", worktree_changes)) if wanted}


def _creation_body(request: CreateTerminalRequest, wait_ready: bool, **route_fields: Any) -> dict[str, Any]:
    """The creation routes' body for ``request``: its JSON form without the session name and the caller
    (the routes that take them get them in ``route_fields``), the working directory defaulting to this
    process's folder, and ``wait_ready``."""
    data = wire.creation_json(request)
    del data["session_name"], data["caller_id"]
    data["working_directory"] = request.working_directory or os.getcwd()
    return _body(**data, wait_ready=wait_ready, **route_fields)


class HttpKernel:
    """A ``KernelAPI`` that calls a cao-server at ``base_url``.

    :param token: the API token, sent as a bearer token (``cao server`` requires it).
    :param timeout: seconds for ordinary requests; creation, waits and handoffs get their own longer
        limits derived from what they wait for.
    """

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"HttpKernel({self.base_url!r})"

    # -- plumbing ---------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            # trust_env off: a proxy from the environment must never see loopback traffic or the token.
            # Plain http needs no certificates; loading them costs ~0.1 s per command.
            plain = self.base_url.startswith("http://")
            self._client = httpx.AsyncClient(
                base_url=self.base_url, headers=headers, timeout=self.timeout, trust_env=False,
                verify=not plain,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> HttpKernel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _not_running(self) -> ServerNotRunning:
        return ServerNotRunning(f"no cao-server is running at {self.base_url}; start it with `cao server`")

    @contextlib.contextmanager
    def _transport_errors(self, method: str, path: str) -> Iterator[None]:
        """httpx's transport failures as cao errors that name the server."""
        import httpx

        try:
            yield
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise self._not_running() from None
        except httpx.TimeoutException:
            raise Timeout(f"cao-server at {self.base_url} did not answer {method} {path} in time") from None
        except httpx.RemoteProtocolError as exc:
            raise ServerNotRunning(f"cao-server at {self.base_url} closed the connection: {exc}") from None
        except httpx.HTTPError as exc:
            raise CaoError(f"request to cao-server at {self.base_url} failed: {exc}") from None

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        with self._transport_errors(method, path):
            response = await self._http().request(
                method,
                path,
                json=dict(json) if json is not None else None,
                params=params,
                timeout=self.timeout if timeout is None else timeout,
            )
        if response.status_code >= 400:
            raise self._error(response)
        return response.json() if response.content else None

    @staticmethod
    def _error(response: httpx.Response) -> CaoError:
        name: Any = None
        try:
            data = response.json()
            detail = data.get("detail") if isinstance(data, dict) else None
            name = data.get("error") if isinstance(data, dict) else None
        except ValueError:
            detail = None
        if not isinstance(detail, str):
            detail = f"cao-server answered {response.status_code}: {detail or response.text.strip()[:200]}"
        return error_class(name, response.status_code)(detail)

    async def events(self, session_name: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """The server's events from now on (``GET /events``), one dict each, until the server ends the
        stream; the first is ``subscribed``. See :mod:`cao_server.events` for what each holds."""
        import json as jsonlib

        import httpx

        params = {"session": session_name} if session_name else None
        # No read timeout: the server sends a ping line every few seconds while nothing happens.
        timeout = httpx.Timeout(self.timeout, read=None)
        with self._transport_errors("GET", "/events"):
            async with self._http().stream("GET", "/events", params=params, timeout=timeout) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise self._error(response)
                async for line in response.aiter_lines():
                    if line.strip():
                        yield jsonlib.loads(line)

    async def call_route(self, method: str, path: str, *, json: Mapping[str, Any] | None = None,
                         params: Mapping[str, Any] | None = None) -> Any:
        """A plugin route's JSON answer (``/flows``...): errors are raised as cao's, like every call's."""
        if not path.startswith("/") or ".." in path.split("/"):
            raise InvalidInput(f"invalid route path {path!r}")
        return await self._call(method, path, json=json, params=params)

    async def team(self, session_name: str | None = None) -> dict[str, Any]:
        """Every session's terminals with what a console shows of each (``GET /team``)."""
        params = {"session": session_name} if session_name else None
        return await self._call("GET", "/team", params=params)

    async def login_link(self) -> str:
        """A one-time login link for a browser (``POST /login-links``): it works once, for ten minutes."""
        return str((await self._call("POST", "/login-links"))["url"])

    async def ping(self) -> dict[str, Any]:
        """The server's health answer; raises ``ServerNotRunning`` when nothing answers."""
        data = await self._call("GET", "/health", timeout=min(self.timeout, 5.0))
        if not isinstance(data, dict) or data.get("status") != "ok":
            raise self._not_running()
        return data

    # -- sessions and terminals -------------------------------------------------------------------

    async def create_session(self, request: CreateTerminalRequest, *, wait_ready: bool = True) -> Terminal:
        """Create a session; ``request.working_directory`` defaults to this process's current folder."""
        body = _creation_body(request, wait_ready, session_name=request.session_name)
        data = await self._call("POST", "/sessions", json=body, timeout=max(self.timeout, CREATE_TIMEOUT))
        return wire.terminal_from_json(data)

    async def create_terminal(self, request: CreateTerminalRequest, *, wait_ready: bool = True) -> Terminal:
        """Add a terminal to the session ``request.session_name``; ``request.working_directory`` defaults to
        this process's current folder."""
        if request.session_name is None:
            raise InvalidInput("a new terminal needs the name of the session it joins")
        caller = _terminal_id(request.caller_id) if request.caller_id is not None else None
        data = await self._call(
            "POST",
            f"/sessions/{_session(request.session_name)}/terminals",
            json=_creation_body(request, wait_ready, caller_id=caller),
            timeout=max(self.timeout, CREATE_TIMEOUT),
        )
        return wire.terminal_from_json(data)

    async def list_sessions(self) -> list[SessionInfo]:
        return [wire.session_from_json(row) for row in await self._call("GET", "/sessions")]

    async def get_session(self, session_name: str) -> tuple[SessionInfo, list[Terminal]]:
        data = await self._call("GET", f"/sessions/{_session(session_name)}")
        return wire.session_from_json(data["session"]), [
            wire.terminal_from_json(t) for t in data["terminals"]
        ]

    async def delete_session(self, session_name: str) -> list[str]:
        data = await self._call("DELETE", f"/sessions/{_session(session_name)}")
        return list(data["deleted"])

    async def list_terminals(self, session_name: str) -> list[Terminal]:
        rows = await self._call("GET", f"/sessions/{_session(session_name)}/terminals")
        return [wire.terminal_from_json(row) for row in rows]

    async def get_terminal(self, terminal_id: str) -> Terminal:
        return wire.terminal_from_json(await self._call("GET", f"/terminals/{_terminal_id(terminal_id)}"))

    async def delete_terminal(self, terminal_id: str) -> None:
        await self._call("DELETE", f"/terminals/{_terminal_id(terminal_id)}")

    # -- input and output -------------------------------------------------------------------------

    async def send_input(self, terminal_id: str, text: str) -> None:
        await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/input", json={"message": text})

    async def send_keys(self, terminal_id: str, key: str) -> None:
        await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/key", json={"key": key})

    async def get_output(self, terminal_id: str, mode: str = "full") -> str:
        data = await self._call(
            "GET", f"/terminals/{_terminal_id(terminal_id)}/output", params={"mode": mode}
        )
        return str(data["output"])

    async def get_status(self, terminal_id: str) -> StatusReport:
        return wire.report_from_json(
            await self._call("GET", f"/terminals/{_terminal_id(terminal_id)}/status")
        )

    async def wait_for_status(
        self, terminal_id: str, statuses: Collection[TerminalStatus], timeout: float
    ) -> StatusReport:
        """Long-poll the server until the terminal reaches one of ``statuses``; ``Timeout`` after
        ``timeout`` seconds, ``AgentFailed`` when it reaches error instead (unless error is awaited)."""
        path = f"/terminals/{_terminal_id(terminal_id)}/wait"
        wanted = ",".join(str(getattr(s, "value", s)) for s in statuses)
        deadline = time.monotonic() + float(timeout)
        while True:
            chunk = max(0.0, min(MAX_WAIT, deadline - time.monotonic()))
            try:
                data = await self._call(
                    "GET",
                    path,
                    params={"status": wanted, "timeout": repr(chunk)},
                    timeout=chunk + self.timeout,
                )
            except Timeout:
                if deadline - time.monotonic() > 0.05:
                    continue
                raise
            return wire.report_from_json(data)

    async def exit_terminal(self, terminal_id: str) -> None:
        await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/exit")

    async def working_directory(self, terminal_id: str) -> str | None:
        data = await self._call("GET", f"/terminals/{_terminal_id(terminal_id)}/working-directory")
        return data["working_directory"]

    # -- messaging and orchestration --------------------------------------------------------------

    async def send_message(
        self, sender_id: str, receiver_id: str | None, message: str, *, idempotency_key: str | None = None
    ) -> Message:
        """Queue ``message`` for ``receiver_id`` (None: the sender's caller). A sender that is not a
        terminal id (``user``, a script's name) needs an explicit receiver."""
        body = _body(message=message, idempotency_key=idempotency_key)
        if isinstance(sender_id, str) and validation.TERMINAL_ID_RE.match(sender_id):
            body["receiver_id"] = _terminal_id(receiver_id) if receiver_id is not None else None
            data = await self._call("POST", f"/terminals/{sender_id}/send_message", json=body)
        else:
            if receiver_id is None:
                raise InvalidInput("no receiver given and the sender has no caller to reply to")
            body["sender_id"] = sender_id
            data = await self._call(
                "POST", f"/terminals/{_terminal_id(receiver_id)}/inbox/messages", json=body
            )
        return wire.message_from_json(data)

    async def list_messages(
        self, terminal_id: str, *, state: MessageState | str | None = None, limit: int = 10
    ) -> list[Message]:
        params: dict[str, Any] = {"limit": limit}
        if state is not None:
            params["status"] = str(getattr(state, "value", state))
        rows = await self._call(
            "GET", f"/terminals/{_terminal_id(terminal_id)}/inbox/messages", params=params
        )
        return [wire.message_from_json(row) for row in rows]

    async def attach_command(self, terminal_id: str) -> list[str]:
        data = await self._call("GET", f"/terminals/{_terminal_id(terminal_id)}/attach-command")
        return [str(arg) for arg in data["argv"]]

    async def restore_terminal(self, terminal_id: str) -> Terminal:
        data = await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/restore",
                                timeout=max(self.timeout, CREATE_TIMEOUT))
        return wire.terminal_from_json(data)

    async def retry_message(self, message_id: int) -> Message:
        return wire.message_from_json(await self._call("POST", f"/messages/{_message_id(message_id)}/retry"))

    async def cancel_message(self, message_id: int) -> Message:
        return wire.message_from_json(await self._call("POST", f"/messages/{_message_id(message_id)}/cancel"))

    async def mcp_connected(self, terminal_id: str, stages: Mapping[str, float] | None = None) -> None:
        await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/mcp-connected",
                         json=dict(stages) if stages else None)

    async def get_timeline(self, terminal_id: str) -> list[TimelineEvent]:
        data = await self._call("GET", f"/terminals/{_terminal_id(terminal_id)}/timeline")
        return [from_json(row, TimelineEvent) for row in data["events"]]

    async def report_activity(self, kind: str, data: Mapping[str, Any] | None = None) -> Activity:
        body = {"kind": kind, "data": dict(data) if data is not None else None}
        return from_json(await self._call("POST", "/activity", json=body), Activity)

    async def handoff(
        self, caller_id: str | None, agent_profile: str, message: str, *, timeout: float = 600.0,
        call_id: str | None = None, model: str | None = None, use_worktree: bool = False,
        worktree_changes: bool = False, job_id: str | None = None,
    ) -> DelegationResult:
        body: dict[str, Any] = {"agent_profile": agent_profile, "message": message, "timeout": timeout,
                                **_worktree_fields(use_worktree, worktree_changes)}
        if call_id is not None:
            body["call_id"] = call_id
        if model:
            body["model"] = model
        if job_id is not None:
            body["job_id"] = job_id
        path = "/handoff" if caller_id is None else f"/terminals/{_terminal_id(caller_id)}/handoff"
        data = await self._call(
            "POST", path, json=body, timeout=float(timeout) + CREATE_TIMEOUT + HANDOFF_MARGIN
        )
        return wire.delegation_from_json(data)

    async def get_handoff_result(self, job_id: str) -> HandoffJob:
        problem = job_id_problem(job_id)
        if problem is not None:  # checked here too: the id goes into the URL
            raise InvalidInput(problem)
        return from_json(await self._call("GET", f"/handoff-results/{job_id}"), HandoffJob)

    async def assign(self, caller_id: str, agent_profile: str, message: str, *, model: str | None = None,
                     use_worktree: bool = False, worktree_changes: bool = False) -> DelegationResult:
        body = {"agent_profile": agent_profile, "message": message, **({"model": model} if model else {}),
                **_worktree_fields(use_worktree, worktree_changes)}
        data = await self._call(
            "POST",
            f"/terminals/{_terminal_id(caller_id)}/assign",
            json=body,
            timeout=max(self.timeout, CREATE_TIMEOUT),
        )
        return wire.delegation_from_json(data)

    async def answer_user_prompt(
        self, terminal_id: str, answer: str, *, prompt_id: str | None = None, as_terminal: str | None = None
    ) -> PromptEvent | None:
        data = await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/answer",
                                json={"answer": answer, "prompt_id": prompt_id, "as_terminal": as_terminal})
        return from_json(data["event"], PromptEvent) if data.get("event") else None

    async def answer_prompt(
        self, terminal_id: str, *, option: int | None = None, text: str | None = None,
        prompt_id: str | None = None, by: str = "person", as_terminal: str | None = None,
    ) -> PromptEvent:
        data = await self._call("POST", f"/terminals/{_terminal_id(terminal_id)}/answer", json={
            "option": option, "text": text, "prompt_id": prompt_id, "by": by, "as_terminal": as_terminal})
        return from_json(data["event"], PromptEvent)

    async def prompt_history(self, terminal_id: str, *, limit: int = 200) -> list[PromptEvent]:
        rows = await self._call("GET", f"/terminals/{_terminal_id(terminal_id)}/prompts",
                                params={"limit": limit})
        return [from_json(row, PromptEvent) for row in rows]

    async def set_prompt_policy(self, session_name: str, policy: Mapping[str, Any] | None) -> None:
        path = f"/sessions/{quote(session_name, safe='')}/prompt-policy"
        if policy is None:
            await self._call("DELETE", path)
        else:
            await self._call("PUT", path, json={"policy": dict(policy)})

    async def get_prompt_policy(self, session_name: str) -> Mapping[str, Any] | None:
        data = await self._call("GET", f"/sessions/{quote(session_name, safe='')}/prompt-policy")
        return data["policy"]

    # -- profiles and providers -------------------------------------------------------------------

    async def list_profiles(self) -> list[AgentProfile]:
        return [wire.profile_from_json(row) for row in await self._call("GET", "/agents/profiles")]

    async def get_profile(self, name: str) -> AgentProfile:
        return wire.profile_from_json(await self._call("GET", f"/agents/profiles/{_profile(name)}"))

    async def list_providers(self) -> list[ProviderInfo]:
        return [ProviderInfo(**row) for row in await self._call("GET", "/agents/providers")]

    async def mcp_tools(self) -> list[McpToolSpec]:
        """The server's plugin MCP tools; each tool's function runs in the server, as its caller."""
        from cao_hookspecs import McpToolSpec

        rows = await self._call("GET", "/mcp-tools")
        return [McpToolSpec(name=row["name"], description=row["description"], factory=self._tool_factory(row["name"]))
                for row in rows]

    def _tool_factory(self, name: str) -> Callable[[Any, str | None], Callable[..., Any]]:
        def factory(kernel: Any, caller_id: str | None) -> Callable[..., Any]:
            async def tool(**arguments: Any) -> Any:
                if caller_id is None:
                    raise InvalidInput(f"the MCP tool {name!r} runs only for a caller with a terminal id")
                path = f"/terminals/{_terminal_id(caller_id)}/mcp-tools/{quote(name, safe='')}"
                data = await self._call("POST", path, json={"arguments": arguments},
                                        timeout=max(self.timeout, CREATE_TIMEOUT))
                return data["result"]

            tool.__name__ = name
            return tool

        return factory

    async def install_profile(
        self, source: str, *, provider: str | None = None, env: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Install a profile on the server from a name or an https URL (never a local path: read the
        file yourself and install it with ``cao install``). ``env`` holds ``KEY=VALUE`` strings."""
        values: dict[str, str] = {}
        for pair in env or ():
            key, sep, value = pair.partition("=")
            if not sep or not key:
                raise InvalidInput(f"invalid environment assignment {pair!r}: use KEY=VALUE")
            values[key] = value
        body = _body(source=source, provider=provider, env_vars=values or None)
        return dict(
            await self._call("POST", "/agents/profiles/install", json=body, timeout=max(self.timeout, 60.0))
        )


def connect(settings: Mapping[str, Any] | None = None, *, timeout: float = 30.0) -> HttpKernel:
    """An ``HttpKernel`` for the server named by ``CAO_API_HOST``/``CAO_API_PORT`` (default
    127.0.0.1:9889), with the API token from ``<CAO_HOME_DIR>/api-token`` when that file exists."""
    from .api_token import read_token

    settings = os.environ if settings is None else settings
    host = advertised_host(str(settings.get("CAO_API_HOST") or DEFAULT_HOST).strip())
    port = str(settings.get("CAO_API_PORT") or DEFAULT_PORT).strip()
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        raise InvalidInput(f"CAO_API_PORT must be a port number (1-65535), got {port!r}")
    return HttpKernel(base_url(host, port), token=read_token(home_dir(settings)), timeout=timeout)


__all__ = ["HttpKernel", "ServerNotRunning", "connect"]
