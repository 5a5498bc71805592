"""The dispatch contract of every hook, through the kernel's facade (``kernel.hooks``).

One ``test_hook_<name>`` per hook of the contract. Plugins are real pluggy plugin objects registered
with the ``register_plugin`` fixture; kernel operations that fire these hooks are tested elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import re
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from cao_hookspecs import (
    Activity,
    BackendSpec,
    CommandSpec,
    CreateTerminalRequest,
    DelegationRequest,
    DelegationResult,
    DeliveryReceipt,
    InboxStoreSpec,
    LaunchPlan,
    Message,
    MessageDraft,
    ProviderCapabilities,
    ProviderSpec,
    SessionInfo,
    StatusReport,
    Terminal,
    hookimpl,
)
from cao_kernel.errors import NotFound, PluginError, Vetoed

# -- plugin objects and records ---------------------------------------------------------------------


def plugin(**hooks: Callable[..., Any]) -> types.SimpleNamespace:
    """A plugin object whose attributes are hook implementations (marked with ``hookimpl`` if bare)."""
    for name, fn in hooks.items():
        if not hasattr(fn, "cao_impl"):
            hooks[name] = hookimpl(fn)
    return types.SimpleNamespace(**hooks)


def recording(fn: Callable[..., Any], calls: list[Any], tag: str) -> Callable[..., Any]:
    """``fn`` with the same signature (pluggy reads it through ``__wrapped__``), logging its calls."""

    @functools.wraps(fn)
    def impl(*args: Any) -> Any:
        calls.append((tag, args))
        return fn(*args)

    return impl


def raising(message: str, calls: list[Any] | None = None, tag: str = "broken") -> Callable[..., Any]:
    def impl(*args: Any) -> Any:
        if calls is not None:
            calls.append((tag, args))
        raise RuntimeError(message)

    return impl


def make_provider(
    name: str, detect: Callable[[str], StatusReport] | None = None, **kwargs: Any
) -> ProviderSpec:
    return ProviderSpec(
        name=name,
        binary=f"{name}-bin",
        launch=lambda ctx: LaunchPlan(argv=[name]),
        detect_status=detect or (lambda screen: StatusReport(status="idle", evidence="default")),
        extract_last_message=lambda text: text,
        **kwargs,
    )


def make_terminal(provider: str = "mine", **kwargs: Any) -> Terminal:
    fields = {"id": "0123abcd", "name": "dev-1a2b", "session_name": "cao-demo", "agent_profile": "dev"}
    fields.update(kwargs)
    return Terminal(provider=provider, **fields)


def make_message(**kwargs: Any) -> Message:
    fields = {"id": 7, "sender_id": "aaaa1111", "receiver_id": "0123abcd", "body": "hello\nworld",
              "state": "delivering", "created_at": 1.0}
    fields.update(kwargs)
    return Message(**fields)


@contextlib.contextmanager
def registered(kernel: Any, register_plugin: Any, *plugins: tuple[str, object]) -> Iterator[None]:
    """Register ``(name, plugin)`` pairs in order for the block."""
    with contextlib.ExitStack() as stack:
        for name, obj in plugins:
            stack.enter_context(register_plugin(kernel, obj, name=name))
        yield


def spec_argnames(kernel: Any, hook: str) -> tuple[str, ...]:
    return tuple(getattr(kernel.pm.hook, hook).spec.argnames)


# -- registration hooks -----------------------------------------------------------------------------


def check_registration(
    kernel: Any, register_plugin: Any, hook: str, make: Callable[[str], Any], registry: str, facade: str
) -> dict[str, Any]:
    """Records are collected and traced to plugins; raising and duplicate plugins are reported."""
    alpha, beta, gamma, other_alpha = make("alpha"), make("beta"), make("gamma"), make("alpha")

    def half_then_raise() -> Iterator[Any]:
        yield make("epsilon")
        raise RuntimeError("registry exploded")

    plugins = [
        ("p_one", plugin(**{hook: lambda: [alpha, beta]})),
        # A nameless record and a record of the wrong type are reported, not registered.
        ("p_two", plugin(**{hook: lambda: (gamma, object(), types.SimpleNamespace(name="delta"))})),
        ("p_broken", plugin(**{hook: half_then_raise})),
        ("p_dup", plugin(**{hook: lambda: [other_alpha]})),
        ("p_none", plugin(**{hook: lambda: None})),
    ]
    assert spec_argnames(kernel, hook) == ()
    # The kernel's built-in plugin may contribute records of its own (the memory inbox store).
    builtin = {c.record.name: c.record for c in getattr(kernel.hooks, facade)()}
    assert not kernel.hooks.problems
    with registered(kernel, register_plugin, *plugins):
        contributions = [c for c in getattr(kernel.hooks, facade)() if c.record.name not in builtin]
        owners = {c.record.name: c.plugin_name for c in contributions}
        assert sorted(c.record.name for c in contributions) == ["alpha", "beta", "delta", "gamma"]
        assert owners["beta"] == "p_one" and owners["gamma"] == "p_two"

        problems = list(kernel.hooks.problems)
        kernel.hooks.problems.clear()
        broken = [p for p in problems if "'p_broken'" in p]
        assert len(broken) == 1 and "RuntimeError: registry exploded" in broken[0]
        assert any("'p_two'" in p and "without a name" in p for p in problems)
        (dup,) = [p for p in problems if "'alpha'" in p]
        named = re.findall(r"'(p_one|p_dup)'", dup)
        assert sorted(named) == ["p_dup", "p_one"], dup
        # "keeping the first": the plugin named first in the message is the one that stays.
        assert "keeping the first" in dup and owners["alpha"] == named[0]
        assert len(problems) == 3, problems

        records = {name: r for name, r in getattr(kernel, registry).items() if name not in builtin}
        assert sorted(records) == ["alpha", "beta", "gamma"]  # delta has the wrong type
        assert records["beta"] is beta and records["gamma"] is gamma
        assert records["alpha"] is (alpha if named[0] == "p_one" else other_alpha)
    # Unregistering invalidates the registry.
    assert sorted(getattr(kernel, registry)) == sorted(builtin)
    return records


def test_hook_register_providers(kernel, register_plugin):
    records = check_registration(
        kernel, register_plugin, "cao_register_providers", make_provider, "providers", "providers"
    )
    assert records["beta"].binary == "beta-bin"
    with register_plugin(kernel, plugin(cao_register_providers=lambda: [make_provider("solo")])):
        assert kernel.provider("solo").name == "solo"
        with pytest.raises(NotFound, match=r"unknown provider 'nope' \(known: solo\); to add it, install "
                                           r"the package cao-provider-nope\Z"):
            kernel.provider("nope")
        with pytest.raises(NotFound, match=r"unknown provider '../x' \(known: solo\)\Z"):
            kernel.provider("../x")


def test_hook_register_backends(kernel, register_plugin):
    check_registration(
        kernel, register_plugin, "cao_register_backends",
        lambda name: BackendSpec(name=name, factory=lambda ctx: None), "backends", "backends",
    )


def test_hook_register_inbox_stores(kernel, register_plugin):
    check_registration(
        kernel, register_plugin, "cao_register_inbox_stores",
        lambda name: InboxStoreSpec(name=name, factory=lambda ctx: None), "inbox_stores", "inbox_stores",
    )


def test_hook_register_commands(kernel, register_plugin):
    loads: list[str] = []

    def make(name: str) -> CommandSpec:
        return CommandSpec(name=name, load=lambda: loads.append(name), help=f"{name} help")

    records = check_registration(
        kernel, register_plugin, "cao_register_commands", make, "commands", "commands"
    )
    assert records["beta"].help == "beta help"
    assert loads == [], "registering a command must not load it"


# -- lookups ----------------------------------------------------------------------------------------


def test_hook_detect_status(kernel, register_plugin, caplog):
    provider = make_provider(
        "mine", detect=lambda screen: StatusReport(status="idle", evidence=f"saw {screen}")
    )
    term = make_terminal("mine")

    # The kernel's trylast default asks the provider.
    report = kernel.hooks.detect_status(term, "❯ ", provider)
    assert report == StatusReport(status="idle", evidence="saw ❯ ")

    def override(terminal: Terminal, screen: str) -> StatusReport | None:
        if terminal.provider == "mine" and "Thinking" in screen:
            return StatusReport(status="processing", evidence="override")
        return None

    calls: list[Any] = []
    overrider = plugin(cao_detect_status=hookimpl(tryfirst=True)(recording(override, calls, "override")))
    with register_plugin(kernel, overrider, name="override"):
        assert kernel.hooks.detect_status(term, "Thinking...", provider).evidence == "override"
        # None falls through to the provider's detector.
        assert kernel.hooks.detect_status(term, "done", provider).evidence == "saw done"
        assert calls == [("override", (term, "Thinking...")), ("override", (term, "done"))]

        broken = plugin(cao_detect_status=hookimpl(tryfirst=True)(raising("detector bug")))
        with register_plugin(kernel, broken, name="broken_detector"):
            caplog.clear()
            assert kernel.hooks.detect_status(term, "Thinking", provider).evidence == "override"
            assert "'broken_detector'" in caplog.text and "detector bug" in caplog.text

    # A provider whose own detector raises gives no reading instead of an exception.
    def bad_detect(screen: str) -> StatusReport:
        raise ValueError("unreadable")

    caplog.clear()
    assert kernel.hooks.detect_status(term, "x", make_provider("mine", detect=bad_detect)) is None
    assert "cao_kernel.builtins" in caplog.text and "unreadable" in caplog.text


class RecordingBackend:
    """Records what the kernel types into terminals (the backend interface under observation)."""

    name = "recording"

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, int, float]] = []
        self.keys: list[tuple[str, list[str]]] = []
        self.marks: dict[str, str] = {}

    def send_text(
        self, terminal_id: str, text: str, *, enter_count: int = 1, submit_delay: float = 0.0,
        mark: str | None = None,
    ) -> None:
        self.sent.append((terminal_id, text, enter_count, submit_delay))
        if mark is not None:
            self.marks[terminal_id] = mark

    def input_mark(self, terminal_id: str) -> Any:
        from cao_hookspecs import InputMark

        mark = self.marks.get(terminal_id)
        return None if mark is None else InputMark(mark=mark, submitted=True)

    def send_keys(self, terminal_id: str, keys: list[str]) -> None:
        self.keys.append((terminal_id, list(keys)))


def test_hook_deliver_message(kernel, register_plugin):
    caps = ProviderCapabilities(enter_count=2, submit_delay=0.25)
    provider = make_provider("mine", capabilities=caps)
    term, message, backend = make_terminal("mine"), make_message(), RecordingBackend()

    # Default: the kernel pastes the body with the provider's Enter count and delay.
    before = time.time()
    receipt = kernel.hooks.deliver_message(term, message, provider, backend)
    assert backend.sent == [("0123abcd", "hello\nworld", 2, 0.25)]
    assert (receipt.message_id, receipt.terminal_id, receipt.method) == (7, "0123abcd", "paste")
    assert before <= receipt.delivered_at <= time.time()

    @hookimpl(tryfirst=True)
    def special(terminal: Terminal, message: Message, backend: Any) -> DeliveryReceipt | None:
        if terminal.provider != "special":
            return None
        backend.send_keys(terminal.id, ["Escape"])
        return DeliveryReceipt(
            message_id=message.id, terminal_id=terminal.id, delivered_at=1.0, method="keys"
        )

    backend.sent.clear()
    with register_plugin(kernel, plugin(cao_deliver_message=special), name="special"):
        special_term = make_terminal("special", id="feedbeef")
        receipt = kernel.hooks.deliver_message(special_term, message, provider, backend)
        assert receipt.method == "keys" and receipt.terminal_id == "feedbeef"
        assert backend.sent == [] and backend.keys == [("feedbeef", ["Escape"])]
        # Returning None lets the default deliver it.
        assert kernel.hooks.deliver_message(term, message, provider, backend).method == "paste"
        assert len(backend.sent) == 1

    # Raising propagates: the delivery engine turns it into a failed attempt.
    backend.sent.clear()
    failing = plugin(cao_deliver_message=hookimpl(tryfirst=True)(raising("pane is gone")))
    with register_plugin(kernel, failing, name="failing"):
        with pytest.raises(RuntimeError, match="pane is gone"):
            kernel.hooks.deliver_message(term, message, provider, backend)
    assert backend.sent == []


# -- before-hooks -----------------------------------------------------------------------------------


# Implementations must name their parameter as the spec does: pluggy passes arguments by name.
_ONE_ARG = {"request": lambda request: None, "draft": lambda draft: None}


def one_arg(param: str, body: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``body`` as an implementation taking one argument named ``param``."""

    @functools.wraps(_ONE_ARG[param])
    def impl(value: Any) -> Any:
        return body(value)

    return impl


def check_before(kernel: Any, register_plugin: Any, hook: str, param: str, request: Any, field: str) -> None:
    """Chained rewrite in call order, veto, wrong return type, wrappers skipped."""
    assert spec_argnames(kernel, hook) == (param,)
    # No implementation: the request comes back untouched.
    assert kernel.hooks.before(hook, request) is request

    seen: list[tuple[str, str]] = []

    def rewriter(tag: str, suffix: str | None) -> Callable[[Any], Any]:
        def body(value: Any) -> Any:
            seen.append((tag, getattr(value, field)))
            return None if suffix is None else attrs.evolve(value, **{field: getattr(value, field) + suffix})

        return one_arg(param, body)

    wrapper_called: list[bool] = []

    @functools.wraps(_ONE_ARG[param])
    def wrapper(value: Any) -> Iterator[None]:
        wrapper_called.append(True)
        return (yield)

    original = getattr(request, field)
    plugins = [
        ("last", plugin(**{hook: rewriter("last", "+C")})),
        ("middle", plugin(**{hook: rewriter("middle", None)})),
        ("first", plugin(**{hook: hookimpl(tryfirst=True)(rewriter("first", "+A"))})),
        ("wrapping", plugin(**{hook: hookimpl(wrapper=True)(wrapper)})),
    ]
    with registered(kernel, register_plugin, *plugins):
        result = kernel.hooks.before(hook, request)
        assert getattr(result, field) == original + "+A+C"
        assert type(result) is type(request)
        assert seen == [("first", original), ("middle", original + "+A"), ("last", original + "+A")]
        assert wrapper_called == [], "before-hooks support no wrappers"

        # Veto: the plugin's message reaches the caller and later plugins never run.
        seen.clear()

        def veto(value: Any) -> None:
            raise PermissionError(f"{hook} refused by policy")

        vetoer = plugin(**{hook: hookimpl(tryfirst=True)(one_arg(param, veto))})
        with register_plugin(kernel, vetoer, name="vetoer"):
            with pytest.raises(Vetoed) as excinfo:
                kernel.hooks.before(hook, request)
            assert str(excinfo.value) == f"{hook} refused by policy"
            assert isinstance(excinfo.value.__cause__, PermissionError)
            assert seen == []

        # A replacement of another type is the plugin's bug, named as such.
        wrong = hookimpl(tryfirst=True)(one_arg(param, lambda value: "not a record"))
        with register_plugin(kernel, plugin(**{hook: wrong}), name="sloppy"):
            with pytest.raises(PluginError, match=rf"{hook} of plugin 'sloppy' returned str, expected "
                                                  rf"{type(request).__name__} or None"):
                kernel.hooks.before(hook, request)
    assert kernel.hooks.before(hook, request) is request


def test_hook_before_session_create(kernel, register_plugin):
    request = CreateTerminalRequest(agent_profile="dev", provider="mock_cli")
    check_before(kernel, register_plugin, "cao_before_session_create", "request", request, "agent_profile")


def test_hook_before_terminal_create(kernel, register_plugin):
    request = CreateTerminalRequest(agent_profile="dev", session_name="cao-demo")
    check_before(kernel, register_plugin, "cao_before_terminal_create", "request", request, "agent_profile")


def test_hook_before_message_send(kernel, register_plugin):
    draft = MessageDraft(sender_id="aaaa1111", receiver_id="bbbb2222", body="hi")
    check_before(kernel, register_plugin, "cao_before_message_send", "draft", draft, "body")


def test_hook_before_handoff(kernel, register_plugin):
    request = DelegationRequest(kind="handoff", caller_id="aaaa1111", agent_profile="dev", message="do it")
    check_before(kernel, register_plugin, "cao_before_handoff", "request", request, "message")


def test_hook_before_assign(kernel, register_plugin):
    request = DelegationRequest(kind="assign", caller_id="aaaa1111", agent_profile="dev", message="do it")
    check_before(kernel, register_plugin, "cao_before_assign", "request", request, "message")


# -- after-hooks (observers) ------------------------------------------------------------------------


def check_observer(
    kernel: Any, register_plugin: Any, caplog: pytest.LogCaptureFixture, hook: str,
    kwargs: dict[str, Any], full: Callable[..., Any], fewer: Callable[..., Any],
) -> None:
    """Right arguments, a raising observer logged and isolated, implementations taking fewer args."""
    argnames = spec_argnames(kernel, hook)
    assert set(kwargs) == set(argnames), "the test must pass exactly the hook's arguments"
    calls: list[Any] = []
    broken = hookimpl(tryfirst=True)(recording(raising(f"{hook} bug"), calls, "broken"))
    plugins = [
        ("no_args", plugin(**{hook: recording(lambda: "ignored", calls, "no_args")})),
        ("fewer", plugin(**{hook: recording(fewer, calls, "fewer")})),
        ("full", plugin(**{hook: recording(full, calls, "full")})),
        ("broken", plugin(**{hook: broken})),
    ]
    caplog.clear()
    with registered(kernel, register_plugin, *plugins):
        assert kernel.hooks.after(hook, **kwargs) is None
    expected = tuple(kwargs[name] for name in argnames)
    fewer_names = tuple(inspect.signature(fewer).parameters)
    assert len(fewer_names) < len(argnames)
    assert calls == [
        ("broken", ()),
        ("full", expected),
        ("fewer", tuple(kwargs[name] for name in fewer_names)),
        ("no_args", ()),
    ]
    assert f"{hook} of plugin 'broken' raised" in caplog.text and f"{hook} bug" in caplog.text
    # Arguments are passed by identity, not copied.
    assert all(a is b for a, b in zip(calls[1][1], expected, strict=True))


def test_hook_after_session_created(kernel, register_plugin, caplog):
    kwargs = {"session": SessionInfo(name="cao-demo"), "terminal": make_terminal()}
    check_observer(kernel, register_plugin, caplog, "cao_after_session_created", kwargs,
                   full=lambda session, terminal: None, fewer=lambda terminal: None)


def test_hook_after_session_killed(kernel, register_plugin, caplog):
    kwargs = {"session_name": "cao-demo", "terminal_ids": ["0123abcd", "89abcdef"]}
    check_observer(kernel, register_plugin, caplog, "cao_after_session_killed", kwargs,
                   full=lambda session_name, terminal_ids: None, fewer=lambda session_name: None)


def test_hook_after_terminal_created(kernel, register_plugin, caplog):
    check_observer(kernel, register_plugin, caplog, "cao_after_terminal_created",
                   {"terminal": make_terminal()},
                   full=lambda terminal: None, fewer=lambda: None)


def test_hook_after_terminal_killed(kernel, register_plugin, caplog):
    check_observer(kernel, register_plugin, caplog, "cao_after_terminal_killed",
                   {"terminal": make_terminal()},
                   full=lambda terminal: None, fewer=lambda: None)


def test_hook_after_status_changed(kernel, register_plugin, caplog):
    kwargs = {
        "terminal": make_terminal(status="completed"),
        "old": StatusReport(status="processing", evidence="spinner"),
        "new": StatusReport(status="completed", evidence="prompt", since=2.0),
    }
    check_observer(kernel, register_plugin, caplog, "cao_after_status_changed", kwargs,
                   full=lambda terminal, old, new: None, fewer=lambda new, terminal: None)


def test_hook_after_message_queued(kernel, register_plugin, caplog):
    check_observer(kernel, register_plugin, caplog, "cao_after_message_queued",
                   {"message": make_message(state="pending")}, full=lambda message: None, fewer=lambda: None)


def test_hook_after_message_delivered(kernel, register_plugin, caplog):
    kwargs = {
        "message": make_message(state="delivered"),
        "receipt": DeliveryReceipt(message_id=7, terminal_id="0123abcd", delivered_at=3.0),
    }
    check_observer(kernel, register_plugin, caplog, "cao_after_message_delivered", kwargs,
                   full=lambda message, receipt: None, fewer=lambda receipt: None)


def test_hook_after_message_failed(kernel, register_plugin, caplog):
    kwargs = {"message": make_message(state="pending", attempts=1), "reason": "pane is gone"}
    check_observer(kernel, register_plugin, caplog, "cao_after_message_failed", kwargs,
                   full=lambda message, reason: None, fewer=lambda reason: None)


def test_hook_after_message_dead(kernel, register_plugin, caplog):
    kwargs = {"message": make_message(state="dead", attempts=5), "reason": "receiver exited"}
    check_observer(kernel, register_plugin, caplog, "cao_after_message_dead", kwargs,
                   full=lambda message, reason: None, fewer=lambda message: None)


def test_hook_after_message_uncertain(kernel, register_plugin, caplog):
    kwargs = {"message": make_message(state="uncertain"), "reason": "no record of what was typed"}
    check_observer(kernel, register_plugin, caplog, "cao_after_message_uncertain", kwargs,
                   full=lambda message, reason: None, fewer=lambda reason: None)


def test_hook_after_activity(kernel, register_plugin, caplog):
    activity = Activity(kind="workflow.step", data={"run_id": "r1", "state": "started"}, at=5.0)
    check_observer(kernel, register_plugin, caplog, "cao_after_activity", {"activity": activity},
                   full=lambda activity: None, fewer=lambda: None)


def _delegation(kind: str) -> DelegationRequest:
    return DelegationRequest(kind=kind, caller_id="aaaa1111", agent_profile="dev", message="task")


def _result(kind: str, success: bool) -> DelegationResult:
    return DelegationResult(kind=kind, success=success, message="done", agent_profile="dev", output="answer")


def test_hook_after_handoff_started(kernel, register_plugin, caplog):
    kwargs = {"request": _delegation("handoff"), "worker": make_terminal(caller_id="aaaa1111")}
    check_observer(kernel, register_plugin, caplog, "cao_after_handoff_started", kwargs,
                   full=lambda request, worker: None, fewer=lambda worker: None)


def test_hook_after_handoff_finished(kernel, register_plugin, caplog):
    check_observer(kernel, register_plugin, caplog, "cao_after_handoff_finished",
                   {"result": _result("handoff", True)}, full=lambda result: None, fewer=lambda: None)


def test_hook_after_assign_started(kernel, register_plugin, caplog):
    kwargs = {"request": _delegation("assign"), "worker": make_terminal(caller_id="aaaa1111")}
    check_observer(kernel, register_plugin, caplog, "cao_after_assign_started", kwargs,
                   full=lambda request, worker: None, fewer=lambda request: None)


def test_hook_after_assign_finished(kernel, register_plugin, caplog):
    check_observer(kernel, register_plugin, caplog, "cao_after_assign_finished",
                   {"result": _result("assign", False)}, full=lambda result: None, fewer=lambda: None)


# -- start-up and shut-down -------------------------------------------------------------------------


def test_hook_startup(kernel, register_plugin, caplog):
    assert kernel.pm.hook.cao_startup.spec.opts["historic"] is True
    calls: list[Any] = []
    early = plugin(cao_startup=recording(lambda kernel: None, calls, "early"))
    no_args = plugin(cao_startup=recording(lambda: None, calls, "no_args"))
    broken = plugin(cao_startup=hookimpl(tryfirst=True)(raising("cannot start")))
    with registered(kernel, register_plugin, ("early", early), ("no_args", no_args), ("broken", broken)):
        kernel.hooks.startup(kernel)
        assert calls == [("no_args", ()), ("early", (kernel,))]
        assert "cao_startup of plugin 'broken' raised" in caplog.text and "cannot start" in caplog.text

        # A plugin registered after start-up is started on its own; the others are not called again.
        calls.clear()
        late = plugin(cao_startup=recording(lambda kernel: None, calls, "late"))
        with register_plugin(kernel, late, name="late"):
            kernel.hooks.startup(kernel, late)
            assert calls == [("late", (kernel,))]


def test_hook_shutdown(kernel, register_plugin, caplog):
    calls: list[Any] = []
    plugins = [
        ("flusher", plugin(cao_shutdown=recording(lambda kernel: None, calls, "flusher"))),
        ("no_args", plugin(cao_shutdown=recording(lambda: None, calls, "no_args"))),
        ("broken", plugin(cao_shutdown=hookimpl(tryfirst=True)(raising("flush failed")))),
    ]
    with registered(kernel, register_plugin, *plugins):
        assert kernel.hooks.shutdown(kernel) == []
    assert calls == [("no_args", ()), ("flusher", (kernel,))]
    assert "cao_shutdown of plugin 'broken' raised" in caplog.text and "flush failed" in caplog.text


async def test_hook_shutdown_awaits_what_plugins_return_before_the_kernel_closes(make_kernel, caplog):
    stopped: list[str] = []

    async def stop_slowly(name: str, fail: bool = False) -> None:
        await asyncio.sleep(0.1)
        if fail:
            raise RuntimeError("would not stop")
        stopped.append(name)

    kernel = make_kernel()
    kernel.register_plugin(plugin(cao_shutdown=hookimpl(lambda: stop_slowly("stopper"))), name="stopper")
    kernel.register_plugin(plugin(cao_shutdown=hookimpl(lambda: stop_slowly("bad", True))), name="stubborn")
    async with kernel:
        pass
    assert stopped == ["stopper"]  # done by the time aclose returned
    assert "cao_shutdown of plugin 'stubborn' failed while stopping" in caplog.text
    assert "would not stop" in caplog.text
