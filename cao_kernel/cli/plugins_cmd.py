"""``cao plugins``: the source of truth for what is installed and what state each plugin is in."""

from __future__ import annotations

import json

import attrs
import click

from . import get_kernel


@click.command()
@click.option("--all", "show_all", is_flag=True, help="Include the kernel's built-in plugin.")
@click.option("--hook", "hook", default=None, help="Only plugins implementing this hook.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def plugins(ctx: click.Context, show_all: bool, hook: str | None, as_json: bool) -> None:
    """List installed plugins: name, distribution, version, hooks, status (active/blocked/failed)."""
    kernel = get_kernel(ctx)
    records = kernel.plugin_records(include_builtin=show_all)
    if hook:
        caller = vars(kernel.pm.hook).get(hook)
        if caller is None or not caller.has_spec():
            # A typo would otherwise print an empty list, which reads as "nobody implements it".
            raise click.BadParameter(f"unknown hook {hook!r} (hooks start with 'cao_'; see docs/hooks.md)",
                                     param_hint="'--hook'")
        records = [r for r in records if hook in r.hooks]
    if as_json:
        click.echo(json.dumps([attrs.asdict(r) for r in records], indent=2))
        return
    if not records:
        click.echo(f"No plugin implements {hook}." if hook else "No plugins installed.")
        return
    for r in records:
        dist = f"{r.distribution} {r.version}" if r.distribution else "(registered in process)"
        click.echo(f"{r.name:<22} {r.status:<8} {dist}")
        if r.hooks:
            click.echo(f"    hooks: {', '.join(r.hooks)}")
        if r.error:
            click.echo(f"    error: {r.error}")
