"""The ``cao`` command line. Commands are resolved lazily: built-ins by module path, plugin commands
through ``cao_register_commands``. Listing them (``cao --help``) reads the command table cached in the
cao home (``command_table``) and imports no plugin; only when that table cannot be trusted are the
plugins loaded, and a new table written."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cao_hookspecs import CommandSpec

    from ..kernel import Kernel

# name -> (module, attribute, one-line help). Kept as strings so listing them imports nothing.
BUILTIN_COMMANDS: dict[str, tuple[str, str, str]] = {
    "plugins": ("cao_kernel.cli.plugins_cmd", "plugins", "List installed plugins, their hooks and status."),
    "install": ("cao_kernel.cli.profile_cmd", "install", "Install an agent profile (name, .md file or https URL)."),
    "profile": ("cao_kernel.cli.profile_cmd", "profile", "List, show and validate agent profiles."),
    "skills": ("cao_kernel.cli.skills_cmd", "skills", "List, show and install cao's agent skills for an agent CLI."),
    "doctor": ("cao_kernel.cli.doctor", "doctor", "Check each provider's CLI, its version and its model API."),
    "provider": ("cao_kernel.cli.provider", "provider", "Create a provider package for another agent CLI."),
    "config": ("cao_kernel.cli.config_cmd", "config", "Show and change cao's settings (settings.json)."),
    "env": ("cao_kernel.cli.env_cmd", "env", "Manage the values profiles reference as ${VAR} (.env)."),
}


def get_kernel(ctx: click.Context) -> Kernel:
    """The kernel for this invocation, built on first use from the root options."""
    root = ctx.find_root()
    state: dict[str, Any] = root.ensure_object(dict)
    if "kernel" not in state:
        from cao_hookspecs.errors import PluginError

        from ..kernel import Kernel
        from ..plugins import LoadPolicy

        try:
            state["kernel"] = Kernel(policy=LoadPolicy.from_env(no_plugins=state.get("no_plugins", False)))
        except PluginError as exc:
            # CAO_STRICT_PLUGINS: a plugin that fails to load is an error, said in one line.
            raise click.ClickException(f"{exc} (CAO_STRICT_PLUGINS is set; unset it, or use --no-plugins "
                                       f"to start without plugins)") from None
    return state["kernel"]


def _admitted(ctx: click.Context, name: str, owner: str) -> bool:
    """Whether a plugin command may take ``name``. One named like a built-in is refused with a warning
    naming both owners (once per invocation): a plugin must never be able to replace ``cao plugins``
    or any other recovery command."""
    root = ctx.find_root()
    if name not in BUILTIN_COMMANDS and name not in getattr(root.command, "commands", {}):
        return True
    warned: set[str] = root.ensure_object(dict).setdefault("refused_commands", set())
    if name not in warned:
        warned.add(name)
        click.echo(f"cao: command {name!r} of plugin {owner} is refused: the name belongs "
                   f"to the built-in command of cao-kernel", err=True)
    return False


def _plugin_commands(ctx: click.Context) -> dict[str, CommandSpec]:
    """Commands contributed by plugins for this invocation, computed once from the kernel (which loads
    the plugins). Every contribution is also kept, with whether registering them went cleanly, for
    the command table."""
    state: dict[str, Any] = ctx.find_root().ensure_object(dict)
    if "plugin_commands" not in state:
        from cao_hookspecs import CommandSpec

        kernel = get_kernel(ctx)
        problems = len(kernel.hooks.problems)
        clean = True
        # (name, help, plugin, owner): command_table rows, built only when a table is written.
        offered: list[tuple[str, str, str, str]] = []
        commands: dict[str, CommandSpec] = {}
        for contribution in kernel.hooks.commands():
            spec, owner = contribution.record, kernel.describe_plugin(contribution.plugin_name)
            if not isinstance(spec, CommandSpec):
                clean = False
                click.echo(f"cao: plugin {owner} registered {type(spec).__name__} where a CommandSpec was "
                           f"expected; ignored", err=True)
                continue
            offered.append((spec.name, spec.help, contribution.plugin_name, owner))
            if _admitted(ctx, spec.name, owner):
                commands[spec.name] = spec
        state["plugin_commands"] = commands
        state["offered_commands"] = (offered, clean and len(kernel.hooks.problems) == problems)
    return state["plugin_commands"]


def _listed_commands(ctx: click.Context) -> dict[str, str]:
    """Name -> help line of the plugin commands, for listing; from the cached table when it can be
    trusted, else from the kernel (and then the table is written again)."""
    state: dict[str, Any] = ctx.find_root().ensure_object(dict)
    if "listed_commands" not in state:
        # A kernel handed in by an embedding app or a test has its own plugins; --no-plugins lists none.
        own_kernel = "kernel" not in state and not state.get("no_plugins", False)
        listed = _cached_listing(ctx) if own_kernel else None
        if listed is None:
            listed = {name: spec.help for name, spec in _plugin_commands(ctx).items()}
            if own_kernel:
                _save_table(state)
        state["listed_commands"] = listed
    return state["listed_commands"]


def _cached_listing(ctx: click.Context) -> dict[str, str] | None:
    from ..home import home_root
    from ..plugin_switches import read_switches
    from .command_table import cached_commands

    only, blocked, _ = read_switches()
    rows = cached_commands(home_root(), only, blocked)
    if rows is None:
        return None
    return {row.name: row.help for row in rows if _admitted(ctx, row.name, row.owner)}


def _save_table(state: dict[str, Any]) -> None:
    """Write the command table from this invocation's kernel, unless anything went wrong loading it."""
    from ..plugins import ACTIVE, FAILED
    from .command_table import CommandRow, PluginEntry, module_state, save

    kernel = state["kernel"]
    offered, clean = state["offered_commands"]
    records = kernel.plugin_records()
    if not clean or any(record.status == FAILED for record in records):
        return
    plugins = [
        PluginEntry(name=record.name, loaded=record.status == ACTIVE,
                    module=module_state(record.entry_point.partition(":")[0].strip()))
        for record in records
        if record.entry_point is not None
    ]
    save(str(kernel.home.root), plugins, [CommandRow(*row) for row in offered])


def _root_flag(args: list[str], flag: str) -> bool:
    """Whether ``flag`` is among the root options, i.e. before the subcommand name."""
    for arg in args:
        if arg == flag:
            return True
        if arg == "--" or not arg.startswith("-"):
            return False
    return False


class CaoGroup(click.Group):
    """Built-in commands first; plugin commands after, refused when they collide with a built-in."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Eager options (--help) run before --no-plugins is processed and list plugin commands, which
        # builds the kernel: read the flag first so `cao --help --no-plugins` loads no plugin either.
        if _root_flag(args, "--no-plugins"):
            ctx.ensure_object(dict)["no_plugins"] = True
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(BUILTIN_COMMANDS) | set(super().list_commands(ctx))
        names |= set(_listed_commands(ctx))
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in BUILTIN_COMMANDS:
            module, attr, _ = BUILTIN_COMMANDS[cmd_name]
            return getattr(importlib.import_module(module), attr)
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        # Running a plugin command loads the plugins as always: the table only serves listings.
        spec = _plugin_commands(ctx).get(cmd_name)
        if spec is None:
            return None
        # Loaded only now: format_commands lists plugin commands from their specs alone.
        loaded = spec.load()
        if not isinstance(loaded, click.Command):
            raise click.ClickException(f"plugin command {cmd_name!r} did not load a click command")
        return loaded

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help without loading any command object.
        rows = []
        plugin_commands = _listed_commands(ctx)
        for name in self.list_commands(ctx):
            if name in BUILTIN_COMMANDS:
                rows.append((name, BUILTIN_COMMANDS[name][2]))
            elif name in plugin_commands:
                rows.append((name, plugin_commands[name]))
            else:
                command = super().get_command(ctx, name)
                if command is not None:
                    rows.append((name, command.get_short_help_str()))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# The guide `cao --skill` prints: the skill for whoever drives cao from a shell (a person or an agent).
GUIDE_SKILL = "cao-sessions"


def _print_guide(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from .skills_cmd import SKILL_FILE, skills_root

    click.echo((skills_root() / GUIDE_SKILL / SKILL_FILE).read_text(encoding="utf-8"), nl=False)
    ctx.exit()


@click.group(cls=CaoGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cao-kernel", prog_name="cao", message="%(prog)s %(version)s")
@click.option("--skill", is_flag=True, is_eager=True, expose_value=False, callback=_print_guide,
              help="Print the guide for an agent (or a person) driving cao from a shell, then exit.")
@click.option("--no-plugins", is_flag=True, help="Load no plugin from entry points (recovery mode).")
@click.pass_context
def cli(ctx: click.Context, no_plugins: bool) -> None:
    """cao: orchestrate CLI coding agents in terminals."""
    from cao_hookspecs.cli import KERNEL_KEY

    state = ctx.ensure_object(dict)
    state["no_plugins"] = no_plugins
    # Plugin commands reach the kernel through cao_hookspecs.cli.kernel_from_context(ctx).
    state[KERNEL_KEY] = lambda: get_kernel(ctx)


def main(argv: list[str] | None = None, *, prog_name: str = "cao") -> None:
    """The ``cao`` script. Other scripts run a ``cao`` command under their own name (``cao-server`` is
    ``cao server``): they find this function through the ``cao`` console-script entry point
    (``cao_hookspecs.cli.run_cao``)."""
    cli.main(args=argv, prog_name=prog_name)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
