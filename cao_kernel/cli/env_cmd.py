"""``cao env get|set|list|unset``: the managed ``.env`` in the cao home, whose values profiles use as
``${VAR}`` (``cao_kernel.profiles.env_store``). Values are never exported to terminals."""

from __future__ import annotations

import sys
from typing import Any

import click

HIDDEN = "********"


def _home() -> Any:
    from ..home import CaoHome

    return CaoHome.from_env()


def _path() -> str:
    from ..profiles.envfile import env_path

    return str(env_path(_home()))


@click.group()
def env() -> None:
    """Manage the values profiles reference as ${VAR} (the .env file in the cao home, mode 0600)."""


@env.command("set")
@click.argument("key")
@click.argument("value", required=False)
def env_set(key: str, value: str | None) -> None:
    """Set KEY to VALUE. Without VALUE it is read from standard input (asked for, hidden, at a terminal),
    which keeps a secret out of the shell's history and the process list."""
    from ..errors import CaoError
    from ..profiles.env_store import set_value

    if value is None:
        if sys.stdin.isatty():
            value = click.prompt(f"Value for {key}", hide_input=True, default="", show_default=False)
        else:
            value = sys.stdin.read().removesuffix("\n").removesuffix("\r")
    try:
        set_value(_home(), key, value)
    except CaoError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"✓ Set {key} in {_path()}")


@env.command("get")
@click.argument("key")
def env_get(key: str) -> None:
    """Print KEY's value."""
    from ..errors import CaoError
    from ..profiles.env_store import read_values

    try:
        values = read_values(_home())
    except CaoError as exc:
        raise click.ClickException(str(exc)) from None
    if key not in values:
        raise click.ClickException(f"Environment variable '{key}' not found.")
    click.echo(values[key])


@env.command("list")
@click.option("--show-values", is_flag=True, help="Print the values too (they are hidden by default).")
def env_list(show_values: bool) -> None:
    """List the managed variables, values hidden unless --show-values."""
    from ..errors import CaoError
    from ..profiles.env_store import read_values

    try:
        values = read_values(_home())
    except CaoError as exc:
        raise click.ClickException(str(exc)) from None
    if not values:
        click.echo(f"No env vars set in {_path()}")
        return
    for key, value in values.items():
        click.echo(f"{key}={value if show_values else HIDDEN}")


@env.command("unset")
@click.argument("key")
def env_unset(key: str) -> None:
    """Remove KEY (a key that is not set is left as it is, and said so)."""
    from ..errors import CaoError
    from ..profiles.env_store import unset_value

    try:
        removed = unset_value(_home(), key)
    except CaoError as exc:
        raise click.ClickException(str(exc)) from None
    if removed:
        click.echo(f"✓ Unset {key} in {_path()}")
    else:
        click.echo(f"{key} was not set in {_path()}", err=True)
