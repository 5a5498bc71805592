"""The server's own settings: where it is bound and who may call it."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9889
DEFAULT_HOME = "~/.aws/cli-agent-orchestrator"
# Host header values every server accepts: the loopback names.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1); other names count as not."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_list(value: Any) -> tuple[str, ...]:
    """A comma-separated setting as a tuple of its non-empty, stripped items."""
    if not value:
        return ()
    return tuple(item.strip() for item in str(value).split(",") if item.strip())


def home_dir(settings: Mapping[str, Any], kernel: Any = None) -> str:
    """The cao home: the kernel's own when it has one, else ``CAO_HOME_DIR``, else upstream's default."""
    root = getattr(getattr(kernel, "home", None), "root", None)
    if root is not None:
        return os.fspath(root)
    return os.path.expanduser(str(settings.get("CAO_HOME_DIR") or DEFAULT_HOME))


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """How a server is bound and guarded.

    - ``host``/``port``: the address the listening socket is bound to;
    - ``allowed_hosts``: Host header values accepted besides the loopback names and ``host``
      (``CAO_ALLOWED_HOSTS``; ``*`` accepts any);
    - ``cors_origins``: browser origins allowed to make state-changing requests (``CAO_CORS_ORIGINS``);
    - ``token``: the API token; required from callers when ``require_token`` (default: whenever the
      server has one, loopback included, for any local user could otherwise drive the owner's agents;
      always off loopback). ``CAO_REQUIRE_TOKEN=0`` lets a loopback server take calls without it, as
      upstream does: only for a machine with no other users.
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allowed_hosts: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    token: str | None = None
    require_token: bool | None = None
    terminal_backend: str = "tmux"

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any], *, host: str, port: int, token: str | None = None, **overrides: Any
    ) -> ServerSettings:
        """Build from cao settings (``CAO_ALLOWED_HOSTS``, ``CAO_CORS_ORIGINS``, ``CAO_TERMINAL_BACKEND``)."""
        opened = str(settings.get("CAO_REQUIRE_TOKEN", "")).strip().lower() in ("0", "false", "no", "off")
        if opened and is_loopback(host) and "require_token" not in overrides:
            overrides["require_token"] = False
        return cls(
            host=host,
            port=port,
            allowed_hosts=split_list(settings.get("CAO_ALLOWED_HOSTS")),
            cors_origins=split_list(settings.get("CAO_CORS_ORIGINS")),
            token=token,
            terminal_backend=str(settings.get("CAO_TERMINAL_BACKEND") or "tmux"),
            **overrides,
        )

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def token_required(self) -> bool:
        if self.require_token is None:
            return self.token is not None or not self.loopback
        return self.require_token

    def url(self, host: str | None = None) -> str:
        """``http://host:port`` with IPv6 hosts in brackets."""
        return base_url(host or self.host, self.port)


def advertised_host(host: str) -> str:
    """The address to call a server bound to ``host`` at: a wildcard bind is reached through loopback."""
    bare = host.strip().strip("[]")
    if bare in ("0.0.0.0", ""):
        return "127.0.0.1"
    if bare == "::":
        return "::1"
    return bare


def base_url(host: str, port: int | str) -> str:
    host = host.strip()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


__all__ = [
    "DEFAULT_HOST",
    "advertised_host",
    "DEFAULT_PORT",
    "ServerSettings",
    "base_url",
    "home_dir",
    "is_loopback",
    "split_list",
]
