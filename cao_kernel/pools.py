"""Warm workers: agents started ahead for a profile, handed to a handoff or assign that asks for one.

A pool is keyed by what an agent cannot change once started: its profile, its provider (the CLI) and its
working directory (every supported CLI fixes its project root at start). A pooled agent is a normal
terminal of its own ``cao-pool-*`` session, started and ready (its MCP connection to cao live), waiting
at its prompt; it counts wherever terminals are counted. A delegation that matches takes one: the
terminal moves into the caller's session as the caller's worker, its task is typed at once, and the pool
fills again in the background. One left unused for the pool's idle time-to-live is stopped; the kernel
stops the rest when it closes, and a kernel that finds pooled terminals left by an earlier one stops
them too (they belong to no one).

Pools are configured per profile (``pool:`` in its frontmatter) or in the settings (``CAO_POOLS``,
``CAO_POOL_TTL``, see ``pool_config``); settings' pools start filling when a session is launched in a
working directory, a profile's own after its first delegation there.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from cao_hookspecs import AgentProfile, CreateTerminalRequest, Terminal, TimelineEvent
from cao_hookspecs.names import POOL_SESSION_PREFIX

from .errors import CaoError
from .pool_config import PoolConfig, parse_pool, parse_settings

if TYPE_CHECKING:
    from .hooks import Hooks
    from .terminals import Terminals

log = logging.getLogger(__name__)

#: Stored with a pooled terminal (``LiveTerminal.extra``) until it is taken.
POOL_KEY = "cao.pool"


@attrs.frozen
class PoolKey:
    profile: str
    provider: str
    working_directory: str

    def label(self) -> str:
        return f"{self.profile} ({self.provider}) in {self.working_directory}"


def _real(path: str) -> str:
    return os.path.realpath(path)


def _agent_facing(request: CreateTerminalRequest) -> tuple[Any, ...]:
    """What a running agent was started with and cannot change (its session and caller it can)."""
    return (request.agent_profile, request.provider, _real(request.working_directory or ""), request.model,
            request.allowed_tools, request.yolo, tuple(sorted(request.env.items())))


@attrs.define(kw_only=True, eq=False)
class WarmPools:
    """The pools of one kernel; lives on its event loop."""

    _terminals: Terminals
    _hooks: Hooks
    _load_profile: Callable[[str], AgentProfile]
    _settings: Mapping[str, Any]
    # Ready terminals by pool, oldest first; creations under way by pool.
    _ready: dict[PoolKey, list[str]] = attrs.field(init=False, factory=dict)
    _filling: dict[PoolKey, int] = attrs.field(init=False, factory=dict)
    _expiry: dict[str, asyncio.TimerHandle] = attrs.field(init=False, factory=dict)
    _tasks: set[asyncio.Task[None]] = attrs.field(init=False, factory=set)
    _configured: dict[str, PoolConfig] = attrs.field(init=False, factory=dict)
    # Delegations waiting for a pool's starting worker, by pool.
    _waiting: dict[PoolKey, int] = attrs.field(init=False, factory=dict)
    # Warm workers asked for but waiting for a start slot, by pool.
    _queued: dict[PoolKey, int] = attrs.field(init=False, factory=dict)
    _start_slots: asyncio.Semaphore = attrs.field(init=False)
    _hooked: dict[PoolKey, tuple[Any, ...]] = attrs.field(init=False, factory=dict)
    # Set (and replaced) whenever a pool's ready or starting workers change: takers waiting on a start.
    _signals: dict[PoolKey, asyncio.Event] = attrs.field(init=False, factory=dict)
    _ttl: float = attrs.field(init=False, default=0.0)
    _closed: bool = attrs.field(init=False, default=False)

    def __attrs_post_init__(self) -> None:
        self._configured, self._ttl, starts = parse_settings(self._settings)
        self._start_slots = asyncio.Semaphore(starts)

    # -- configuration ----------------------------------------------------------------------------

    def config(self, profile: AgentProfile) -> PoolConfig | None:
        """The profile's pool (its own ``pool:`` wins over the settings'), None when it has none."""
        if profile.pool is not None:
            found = parse_pool(profile.pool, f"profile {profile.name!r} pool", default_ttl=self._ttl)
        else:
            found = self._configured.get(profile.name)
        return found if found is not None and found.size > 0 and self._terminals.can_move() else None

    # -- filling ----------------------------------------------------------------------------------

    def session_launched(self, terminal: Terminal, extra: Mapping[str, str]) -> None:
        """A session's first CLI is ready (``Terminals.on_new_session``): start filling the settings'
        pools for its directory and provider (not for a pool's own session)."""
        if (self._closed or not self._configured or terminal.working_directory is None
                or POOL_KEY in extra):
            return
        for name in self._configured:
            # A pool that cannot fill is reported; the session it was to serve starts regardless.
            try:
                profile = self._load_profile(name)
                provider = profile.provider or terminal.provider
                self._fill(PoolKey(name, provider, _real(terminal.working_directory)), profile)
            except CaoError as exc:
                log.warning("pool of profile %r: %s", name, exc)

    def _fill(self, key: PoolKey, profile: AgentProfile) -> None:
        config = self.config(profile)
        if config is None or self._closed:
            return
        missing = (config.size - len(self._ready.get(key, ())) - self._filling.get(key, 0)
                   - self._queued.get(key, 0))
        for _ in range(max(0, missing)):
            self._queued[key] = self._queued.get(key, 0) + 1
            task = asyncio.ensure_future(self._start_one(key, config))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _start_one(self, key: PoolKey, config: PoolConfig) -> None:
        request = CreateTerminalRequest(
            agent_profile=key.profile, provider=key.provider, working_directory=key.working_directory,
            session_name=POOL_SESSION_PREFIX + secrets.token_hex(4))
        started = False
        try:
            # Agents starting together slow each other and the agents at work (a CLI's start is mostly
            # CPU): warm workers start a few at a time, in the order they were asked for.
            async with self._start_slots:
                self._queued[key] -= 1
                self._filling[key] = self._filling.get(key, 0) + 1
                started = True
                # What the creation hooks make of a pool's request (the server adds its address, say): a
                # delegation's request must come out of them the same to take one of its workers.
                self._hooked[key] = _agent_facing(self._hooks.before("cao_before_terminal_create", request))
                terminal = await self._terminals.create_session(request, wait_ready=True,
                                                                extra={POOL_KEY: key.profile})
        except CaoError as exc:
            # Not retried here: the next delegation to the profile tries again.
            log.warning("warm worker for %s could not start: %s", key.label(), str(exc).splitlines()[0])
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("warm worker for %s could not start", key.label())
            return
        finally:
            if started:
                self._filling[key] -= 1
            else:
                self._queued[key] -= 1
            self._notify(key)
        if self._closed:
            await self._stop(terminal.id)
            return
        self._ready.setdefault(key, []).append(terminal.id)
        self._notify(key)
        self._expiry[terminal.id] = asyncio.get_running_loop().call_later(
            config.ttl, lambda: self._expired(key, terminal.id))
        log.info("warm worker %s ready for %s", terminal.id, key.label())

    def _expired(self, key: PoolKey, terminal_id: str) -> None:
        self._expiry.pop(terminal_id, None)
        ready = self._ready.get(key, [])
        if terminal_id in ready:
            ready.remove(terminal_id)
            task = asyncio.ensure_future(self._stop(terminal_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _stop(self, terminal_id: str) -> None:
        try:
            await self._terminals.delete_terminal(terminal_id)
        except CaoError:
            pass  # gone already
        except Exception:  # noqa: BLE001 - clean-up: report and go on
            log.exception("stopping warm worker %s failed", terminal_id)

    # -- taking -----------------------------------------------------------------------------------

    async def take(self, profile: AgentProfile, request: CreateTerminalRequest, *,
                   extra: Mapping[str, str] | None = None,
                   requested: TimelineEvent | None = None) -> Terminal | None:
        """A warm worker for ``request`` (a delegation's worker, with its caller), moved into the
        caller's session with ``extra`` stored with it; None when the profile has no pool, or none is
        ready or starting for it (the pool then starts filling), and the worker is started as usual.

        The request passes ``cao_before_terminal_create`` as a new worker's would (a veto refuses the
        delegation); a request the hook changes, or one asking for what a running agent cannot take on
        (its own environment, model, tools), gets no warm worker.
        """
        if (self._closed or request.caller_id is None or request.session_name is None or request.env
                or request.model or request.allowed_tools is not None or request.yolo
                or request.working_directory is None or request.provider is None
                or self.config(profile) is None):
            return None
        key = PoolKey(profile.name, request.provider, _real(request.working_directory))
        if not self._ready.get(key) and self._filling.get(key, 0) <= self._waiting.get(key, 0):
            self._fill(key, profile)
            return None
        if _agent_facing(self._hooks.before("cao_before_terminal_create", request)) != self._hooked.get(key):
            return None
        while self._ready.get(key) or self._filling.get(key, 0) > self._waiting.get(key, 0):
            ready = self._ready.get(key)
            if not ready:
                # A warm worker is starting that no other delegation waits for: it is further along than
                # a new one would be. (One only queued to start is not: a new one starts now.)
                self._waiting[key] = self._waiting.get(key, 0) + 1
                try:
                    await self._changed(key).wait()
                finally:
                    self._waiting[key] -= 1
                continue
            terminal_id = ready.pop(0)
            expiry = self._expiry.pop(terminal_id, None)
            if expiry is not None:
                expiry.cancel()
            live = self._terminals.get(terminal_id)
            if live is None or live.tracker.failed_for_good or not self._terminals.can_receive(terminal_id):
                if live is not None:
                    await self._stop(terminal_id)
                continue
            pooled_at = live.record.created_at
            kept = {k: v for k, v in live.extra.items() if k != POOL_KEY}
            kept.update(extra or {})
            try:
                terminal = await self._terminals.move(terminal_id, request.session_name, request.caller_id,
                                                      kept)
            except CaoError as exc:
                log.warning("warm worker %s could not join session %s: %s", terminal_id,
                            request.session_name, exc)
                await self._stop(terminal_id)
                continue
            timelines = self._terminals.timelines
            if requested is not None:
                timelines.record(terminal_id, requested.name, at=requested.at, detail=requested.detail)
            timelines.record(terminal_id, "pool_taken",
                             detail={"pooled_for": f"{time.time() - pooled_at:.3f}"})
            # It joins the caller's session: announced there as any new worker is.
            self._hooks.after("cao_after_terminal_created", terminal=terminal)
            self._fill(key, profile)
            return terminal
        self._fill(key, profile)
        return None

    def _changed(self, key: PoolKey) -> asyncio.Event:
        return self._signals.setdefault(key, asyncio.Event())

    def _notify(self, key: PoolKey) -> None:
        event = self._signals.pop(key, None)
        if event is not None:
            event.set()

    # -- life cycle -------------------------------------------------------------------------------

    async def stop_leftovers(self) -> None:
        """Stop pooled terminals an earlier kernel left (re-adopted, they belong to no one)."""
        left = self._terminals.find_all(lambda live: POOL_KEY in live.extra)
        for live in left:
            await self._stop(live.id)

    async def aclose(self) -> None:
        """Stop filling and stop every warm worker not taken."""
        self._closed = True
        for handle in self._expiry.values():
            handle.cancel()
        self._expiry.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        waiting = [terminal_id for ready in self._ready.values() for terminal_id in ready]
        self._ready.clear()
        for terminal_id in waiting:
            await self._stop(terminal_id)
        await self.stop_leftovers()


__all__ = ["POOL_KEY", "PoolKey", "WarmPools"]
