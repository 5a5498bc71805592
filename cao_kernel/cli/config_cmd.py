"""``cao config get|set|unset|list|path``: the settings file in the cao home (``settings_file``).

These commands build no kernel: a settings file the kernel refuses must still be repairable here.
"""

from __future__ import annotations

import json
import os
from typing import Any

import click


def _home() -> Any:
    from ..home import CaoHome

    return CaoHome.from_env()


def _typed(name: str, text: str) -> Any:
    """The value as its type (a number, a list) for printing as JSON; the text when it does not parse."""
    from ..errors import InvalidInput
    from ..settings_file import parse_value

    try:
        return parse_value(name, text)
    except InvalidInput:
        return text


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group()
def config() -> None:
    """Show and change cao's settings (settings.json in the cao home; CAO_* variables win over it)."""


@config.command("get")
@click.argument("key")
def get_cmd(key: str) -> None:
    """Print KEY's effective value as JSON (e.g. terminal.default_provider)."""
    from ..errors import CaoError
    from ..settings_file import key_of, resolved

    try:
        key_of(key)
        value, _source = resolved(_home(), os.environ)[key]
    except CaoError as exc:
        raise _fail(exc) from None
    click.echo(json.dumps(_typed(key, value)))


@config.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
def set_cmd(key: str, value: str) -> None:
    """Set KEY to VALUE in the settings file (lists: comma-separated or a JSON list)."""
    from ..errors import CaoError
    from ..settings_file import key_of, parse_value, update

    try:
        setting = key_of(key)
        typed = parse_value(key, value)
        update(_home(), key, typed)
    except CaoError as exc:
        raise _fail(exc) from None
    click.echo(json.dumps(typed))
    if os.environ.get(setting.env):
        click.echo(f"warning: {setting.env} is set in the environment and takes precedence over the file",
                   err=True)


@config.command("unset")
@click.argument("key")
def unset_cmd(key: str) -> None:
    """Remove KEY from the settings file (its default, or the environment's value, applies again)."""
    from ..errors import CaoError
    from ..settings_file import update

    try:
        update(_home(), key, None)
    except CaoError as exc:
        raise _fail(exc) from None
    click.echo(f"Unset {key}")


@config.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: value, source, variable and help per key.")
def list_cmd(as_json: bool) -> None:
    """List every setting with its effective value (environment, then file, then default)."""
    from ..errors import CaoError
    from ..settings_file import KEYS, resolved

    try:
        rows = resolved(_home(), os.environ)
    except CaoError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps([
            {"key": name, "value": _typed(name, value), "source": source, "env": KEYS[name].env,
             "help": KEYS[name].help}
            for name, (value, source) in rows.items()
        ], indent=2))
        return
    for name, (value, _source) in rows.items():
        click.echo(f"{name} = {json.dumps(_typed(name, value))}")


@config.command("path")
def path_cmd() -> None:
    """Print the settings file's path."""
    from ..settings_file import settings_path

    click.echo(str(settings_path(_home())))
