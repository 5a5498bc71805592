"""The entry point: registration, laziness, and the Protocol."""

from __future__ import annotations

import subprocess
import sys

from cao_hookspecs import BackendSpec, RuntimeContext, TerminalBackend


def test_registers_the_tmux_backend(plugin_manager, cao_home):
    from cao_tmux import plugin

    plugin_manager.register(plugin, name="tmux")
    plugin_manager.check_pending()
    [specs] = plugin_manager.hook.cao_register_backends()
    [spec] = specs
    assert isinstance(spec, BackendSpec) and spec.name == "tmux"
    backend = spec.factory(RuntimeContext(home_dir=str(cao_home), settings={"CAO_TMUX_SOCKET_NAME": "cao-x"}))
    assert isinstance(backend, TerminalBackend)
    assert backend.name == "tmux"
    assert backend.server.socket_name == "cao-x" and backend.server.socket_path is None
    assert backend.fifo_dir == cao_home / "runtime" / "fifos"


def test_socket_path_wins_over_socket_name(cao_home):
    from cao_tmux.backend import TmuxBackend

    ctx = RuntimeContext(
        home_dir=str(cao_home), settings={"CAO_TMUX_SOCKET": "/run/x.sock", "CAO_TMUX_SOCKET_NAME": "ignored"}
    )
    backend = TmuxBackend.from_context(ctx)
    handle = backend.server.libtmux()
    assert (handle.socket_path, handle.socket_name) == ("/run/x.sock", None)
    default = TmuxBackend.from_context(
        RuntimeContext(home_dir=str(cao_home), settings={"CAO_TMUX_SOCKET": ""})
    )
    handle = default.server.libtmux()
    assert (handle.socket_path, handle.socket_name) == (None, None)


def test_entry_point_module_is_thin():
    code = "import sys, cao_tmux.plugin; print(sorted(m for m in sys.modules if m.startswith('cao_tmux')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['cao_tmux', 'cao_tmux.plugin']"


def test_backend_implements_the_protocol_exactly():
    import inspect

    from cao_tmux.backend import TmuxBackend

    for name, member in inspect.getmembers(TerminalBackend, inspect.isfunction):
        if name.startswith("_"):
            continue
        ours = getattr(TmuxBackend, name)
        assert inspect.signature(ours) == inspect.signature(member), name
