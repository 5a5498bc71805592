"""``cao install`` and ``cao profile list|show|validate``.

Unlike upstream, a failed install exits with status 1 (``Error: <problem>`` on stderr).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from . import get_kernel

if TYPE_CHECKING:
    from ..profiles.store import ProfileStore

_DESCRIPTION_WIDTH = 72


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


def _provider_dirs(ctx: click.Context) -> dict[str, tuple[str, ...]]:
    return {name: spec.agent_dirs for name, spec in get_kernel(ctx).providers.items() if spec.agent_dirs}


def _store(ctx: click.Context) -> ProfileStore:
    from ..profiles.store import ProfileStore

    return ProfileStore(get_kernel(ctx).home, _provider_dirs(ctx))


def _warn_unresolved(names: set[str] | tuple[str, ...]) -> None:
    if names:
        click.echo(
            f"⚠ Unresolved env var(s) in profile: {', '.join(sorted(names))}. "
            "Pass --env KEY=VALUE to `cao install` to set them.",
            err=True,
        )


@click.command()
@click.argument("source")
@click.option("--provider", default=None, help="Provider to record for the profile (default: its own).")
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Store a value in the cao home's .env for ${KEY} placeholders (repeatable).",
)
@click.pass_context
def install(ctx: click.Context, source: str, provider: str | None, env_pairs: tuple[str, ...]) -> None:
    """Install an agent profile into the local store.

    SOURCE is a profile name (copied from wherever it is found), a path to a .md file, or an https
    URL on an allowed host (github.com, raw.githubusercontent.com, CAO_PROFILE_ALLOWED_HOSTS).
    """
    from ..errors import CaoError
    from ..profiles.fetch import allowed_hosts, download_timeout
    from ..profiles.install import SOURCE_NAME, SOURCE_PATH, SOURCE_URL, source_kind
    from ..profiles.install import install as install_profile

    try:
        kernel = get_kernel(ctx)
        settings = {k: str(v) for k, v in kernel.settings.items()}
        result = install_profile(
            source,
            kernel.home,
            provider=provider,
            env=env_pairs,
            provider_dirs=_provider_dirs(ctx),
            known_providers=set(kernel.providers) if provider else None,
            allowed_hosts=allowed_hosts(settings),
            timeout=download_timeout(settings) if source_kind(source) == SOURCE_URL else None,
        )
    except CaoError as exc:
        raise _fail(exc) from None
    if result.source_kind == SOURCE_URL:
        click.echo("✓ Downloaded agent from URL to local store")
    elif result.source_kind == SOURCE_PATH:
        click.echo("✓ Copied agent from file to local store")
    elif result.source_kind == SOURCE_NAME and not result.already_local:
        click.echo(f"✓ Copied agent from {result.found_in} to local store")
    click.echo(f"✓ Agent '{result.name}' installed successfully")
    if result.env_set:
        click.echo(f"✓ Set {len(result.env_set)} env var(s) in {result.env_file}")
    click.echo(f"✓ Profile file: {result.store_file}")
    click.echo(f"✓ Context file: {result.context_file}")
    if result.provider:
        click.echo(f"✓ Provider: {result.provider}")
    _warn_unresolved(result.unresolved_vars)


@click.group()
def profile() -> None:
    """List, show and validate agent profiles."""


@profile.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON rows (as GET /agents/profiles).")
@click.pass_context
def list_profiles(ctx: click.Context, as_json: bool) -> None:
    """List every profile, where it comes from and whether it loads."""
    from ..errors import CaoError

    try:
        entries = _store(ctx).list()
    except CaoError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps([e.to_dict() for e in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        click.echo("No agent profiles found.")
        return
    rows = [("NAME", "SOURCE", "DESCRIPTION")]
    for e in entries:
        text = e.description if e.loadable else f"(not loadable) {e.error}"
        if e.duplicated_in:
            text = f"{text} [also in: {', '.join(e.duplicated_in)}]"
        rows.append((e.name, e.source, _shorten(text)))
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    for name, source, text in rows:
        click.echo(f"{name:<{widths[0]}}  {source:<{widths[1]}}  {text}".rstrip())


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DESCRIPTION_WIDTH else text[: _DESCRIPTION_WIDTH - 1] + "…"


def _load(ctx: click.Context, ref: str, unresolved: set[str]) -> Any:
    return _store(ctx).load_ref(ref, unresolved=unresolved)


@profile.command("show")
@click.argument("name_or_path")
@click.option("--json", "as_json", is_flag=True, help="Print the parsed profile as JSON.")
@click.pass_context
def show(ctx: click.Context, name_or_path: str, as_json: bool) -> None:
    """Show a profile (by name, or a path to a .md file), placeholders resolved."""
    from ..errors import CaoError
    from ..profiles.parse import profile_to_dict, serialize_profile

    unresolved: set[str] = set()
    try:
        loaded = _load(ctx, name_or_path, unresolved)
        text = None if as_json else serialize_profile(loaded)
    except CaoError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps(profile_to_dict(loaded), indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(f"# source: {loaded.source}  path: {loaded.path}")
        click.echo(text, nl=False)
    _warn_unresolved(unresolved)


@profile.command("validate")
@click.argument("name_or_path")
@click.pass_context
def validate(ctx: click.Context, name_or_path: str) -> None:
    """Check that a profile (by name, or a path to a .md file) parses; exit 1 with the problem if not."""
    from ..errors import CaoError

    unresolved: set[str] = set()
    try:
        loaded = _load(ctx, name_or_path, unresolved)
    except CaoError as exc:
        raise _fail(exc) from None
    click.echo(f"✓ Profile '{loaded.name}' is valid ({loaded.source}: {loaded.path})")
    _warn_unresolved(unresolved)
