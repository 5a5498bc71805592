"""Entry point of cao-tmux (kept thin: the backend and its modules load only when a backend is built)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cao_hookspecs import BackendSpec, hookimpl

if TYPE_CHECKING:
    from cao_hookspecs import RuntimeContext


def _create(ctx: RuntimeContext) -> Any:
    from .backend import TmuxBackend

    return TmuxBackend.from_context(ctx)


@hookimpl
def cao_register_backends() -> list[BackendSpec]:
    """The ``tmux`` backend. Settings: ``CAO_TMUX_SOCKET`` (tmux -S), ``CAO_TMUX_SOCKET_NAME`` (tmux -L),
    ``CAO_TMUX_CONFIG`` (tmux -f for a server cao starts)."""
    return [
        BackendSpec(
            name="tmux",
            factory=_create,
            description="agents in tmux windows; output pushed through pipe-pane FIFOs",
        )
    ]
