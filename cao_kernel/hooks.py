"""The typed facade over the plugin manager: the only code in cao that calls hooks.

Three calling styles live here:

- registration hooks: each implementation is called on its own so a record can be traced to its plugin
  (for duplicate errors) and a raising plugin contributes nothing without hiding the others;
- lookups (``firstresult``): plain pluggy calls;
- lifecycle: before-hooks chained in call order, after-hooks isolated per implementation.

Calling implementations one by one skips ``wrapper`` implementations; the hook docs say so.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from functools import partialmethod
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from .errors import PluginError, Vetoed

if TYPE_CHECKING:
    from cao_hookspecs import (
        BackendSpec,
        CommandSpec,
        DeliveryReceipt,
        InboxStoreSpec,
        KernelAPI,
        Message,
        OpenPrompt,
        Prompt,
        PromptDecision,
        ProviderSpec,
        StatusReport,
        Terminal,
        TerminalBackend,
    )

log = logging.getLogger(__name__)

T = TypeVar("T")

#: An observer hook call as services make it: ``emit("cao_after_message_queued", message=...)``.
Emit = Callable[..., None]


class Contribution:
    """A record together with the plugin that registered it."""

    __slots__ = ("plugin_name", "record")

    def __init__(self, record: Any, plugin_name: str) -> None:
        self.record = record
        self.plugin_name = plugin_name


class Hooks:
    """Typed entry points to every hook. Owned by a ``Kernel``; one per plugin manager."""

    def __init__(self, pm: pluggy.PluginManager, describe: Callable[[str], str] | None = None) -> None:
        self.pm = pm
        # Turns a plugin name into "name (distribution)" for error messages.
        self._describe = describe or (lambda name: repr(name))
        self.problems: list[str] = []

    # -- plumbing ---------------------------------------------------------------------------------

    def _impls(self, hook_name: str) -> Iterator[pluggy.HookImpl]:
        """Implementations in the order pluggy would call them (tryfirst first), wrappers skipped."""
        caller = getattr(self.pm.hook, hook_name)
        for impl in reversed(caller.get_hookimpls()):
            if impl.hookwrapper or impl.wrapper:
                continue
            yield impl

    @staticmethod
    def _call_impl(impl: pluggy.HookImpl, kwargs: dict[str, Any]) -> Any:
        # Implementations may accept fewer arguments than the spec offers.
        return impl.function(*[kwargs[name] for name in impl.argnames])

    def _register_all(self, hook_name: str, kind: str) -> list[Contribution]:
        found: list[Contribution] = []
        by_name: dict[str, Contribution] = {}
        for impl in self._impls(hook_name):
            try:
                records = list(self._call_impl(impl, {}) or ())
            except Exception as exc:  # noqa: BLE001 - isolate a broken plugin
                self._problem(f"{kind} registration of plugin {self._describe(impl.plugin_name)} failed: "
                              f"{type(exc).__name__}: {exc}")
                continue
            for record in records:
                name = getattr(record, "name", None)
                if not isinstance(name, str) or not name:
                    self._problem(f"plugin {self._describe(impl.plugin_name)} registered a {kind} without a name")
                    continue
                if name in by_name:
                    first = by_name[name]
                    self._problem(
                        f"{kind} {name!r} is registered by both {self._describe(first.plugin_name)} and "
                        f"{self._describe(impl.plugin_name)}; keeping the first"
                    )
                    continue
                contribution = Contribution(record, impl.plugin_name)
                by_name[name] = contribution
                found.append(contribution)
        return found

    def _problem(self, message: str) -> None:
        log.warning(message)
        self.problems.append(message)

    # -- registration hooks (each: the contributions of one hook, see _register_all) ---------------

    providers = partialmethod(_register_all, "cao_register_providers", "provider")
    backends = partialmethod(_register_all, "cao_register_backends", "backend")
    inbox_stores = partialmethod(_register_all, "cao_register_inbox_stores", "inbox store")
    commands = partialmethod(_register_all, "cao_register_commands", "command")
    routes = partialmethod(_register_all, "cao_register_routes", "route")
    mcp_tools = partialmethod(_register_all, "cao_register_mcp_tools", "MCP tool")
    mcp_servers = partialmethod(_register_all, "cao_register_mcp_servers", "MCP server")

    # -- lookups ----------------------------------------------------------------------------------

    def detect_status(self, terminal: Terminal, screen: str, provider: ProviderSpec) -> StatusReport | None:
        return self._first("cao_detect_status", "status detector",
                           {"terminal": terminal, "screen": screen, "provider": provider})

    def read_prompt(self, terminal: Terminal, screen: str, provider: ProviderSpec) -> Prompt | None:
        return self._first("cao_read_prompt", "prompt reader",
                           {"terminal": terminal, "screen": screen, "provider": provider})

    def decide_prompt(self, terminal: Terminal, prompt: OpenPrompt) -> PromptDecision | None:
        return self._first("cao_decide_prompt", "prompt decider", {"terminal": terminal, "prompt": prompt})

    def _first(self, hook_name: str, what: str, kwargs: dict[str, Any]) -> Any:
        """A lookup whose raising implementations are logged and passed over (readers, deciders)."""
        for impl in self._impls(hook_name):
            try:
                result = self._call_impl(impl, kwargs)
            except Exception:  # noqa: BLE001 - one plugin's bug must not stop the others
                log.exception("%s of plugin %s raised", what, self._describe(impl.plugin_name))
                continue
            if result is not None:
                return result
        return None

    def deliver_message(
        self, terminal: Terminal, message: Message, provider: ProviderSpec, backend: TerminalBackend
    ) -> DeliveryReceipt | None:
        # Exceptions propagate: the delivery engine turns them into a failed attempt.
        return self.pm.hook.cao_deliver_message(
            terminal=terminal, message=message, provider=provider, backend=backend
        )

    # -- lifecycle --------------------------------------------------------------------------------

    def before(self, hook_name: str, request: T) -> T:
        """Run a chained before-hook. Returns the (possibly rewritten) request; raises ``Vetoed``."""
        (param,) = self._spec_argnames(hook_name)
        current = request
        for impl in self._impls(hook_name):
            try:
                replacement = self._call_impl(impl, {param: current})
            except Exception as exc:
                raise Vetoed(f"{exc}") from exc
            if replacement is not None:
                if type(replacement) is not type(request):
                    raise PluginError(
                        f"{hook_name} of plugin {self._describe(impl.plugin_name)} returned "
                        f"{type(replacement).__name__}, expected {type(request).__name__} or None"
                    )
                current = replacement
        return current

    def after(self, hook_name: str, **kwargs: Any) -> None:
        """Run an observer hook; each implementation isolated."""
        for impl in self._impls(hook_name):
            try:
                self._call_impl(impl, kwargs)
            except Exception:  # noqa: BLE001 - observers never break the action they observe
                log.exception("%s of plugin %s raised", hook_name, self._describe(impl.plugin_name))

    def startup(self, kernel: KernelAPI, plugin: object | None = None) -> None:
        """Call ``cao_startup``: for every plugin, or only ``plugin`` when it registered late."""
        for impl in self._impls("cao_startup"):
            if plugin is not None and impl.plugin is not plugin:
                continue
            try:
                self._call_impl(impl, {"kernel": kernel})
            except Exception:  # noqa: BLE001
                log.exception("cao_startup of plugin %s raised", self._describe(impl.plugin_name))

    def shutdown(self, kernel: KernelAPI) -> list[Awaitable[Any]]:
        """Call ``cao_shutdown``, each implementation isolated; what they returned to be awaited (a
        plugin's own tasks or servers that end on the kernel's loop)."""
        pending: list[Awaitable[Any]] = []
        for impl in self._impls("cao_shutdown"):
            try:
                result = self._call_impl(impl, {"kernel": kernel})
            except Exception:  # noqa: BLE001 - shutdown goes on
                log.exception("cao_shutdown of plugin %s raised", self._describe(impl.plugin_name))
                continue
            if inspect.isawaitable(result):
                pending.append(self._isolated(result, impl.plugin_name))
        return pending

    async def _isolated(self, work: Awaitable[Any], plugin_name: str) -> None:
        try:
            await work
        except Exception:  # noqa: BLE001 - one plugin's failure to stop does not stop the others
            log.exception("cao_shutdown of plugin %s failed while stopping", self._describe(plugin_name))

    def _spec_argnames(self, hook_name: str) -> tuple[str, ...]:
        caller = getattr(self.pm.hook, hook_name)
        assert caller.spec is not None, hook_name
        return tuple(caller.spec.argnames)


def records_of(contributions: list[Contribution], kind: type[T]) -> dict[str, T]:
    """Name -> record, checking each record's type (a plugin may return anything)."""
    out: dict[str, T] = {}
    for contribution in contributions:
        if isinstance(contribution.record, kind):
            out[contribution.record.name] = contribution.record
        else:
            log.warning("plugin %r returned %r where a %s was expected", contribution.plugin_name,
                        type(contribution.record).__name__, kind.__name__)
    return out


__all__ = ["Contribution", "Emit", "Hooks", "records_of"]

