"""The ``cao`` command line. Commands are resolved lazily: built-ins by module path, plugin commands
through ``cao_register_commands``, so ``cao --help`` imports no heavy library."""

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
}


def get_kernel(ctx: click.Context) -> Kernel:
    """The kernel for this invocation, built on first use from the root options."""
    root = ctx.find_root()
    state: dict[str, Any] = root.ensure_object(dict)
    if "kernel" not in state:
        from ..kernel import Kernel
        from ..plugins import LoadPolicy

        state["kernel"] = Kernel(policy=LoadPolicy.from_env(no_plugins=state.get("no_plugins", False)))
    return state["kernel"]


def _plugin_commands(ctx: click.Context) -> dict[str, CommandSpec]:
    """Commands contributed by plugins for this invocation, computed once.

    A plugin command named like a built-in is refused with a warning naming both owners: a plugin must
    never be able to replace ``cao plugins`` or any other recovery command.
    """
    state: dict[str, Any] = ctx.find_root().ensure_object(dict)
    if "plugin_commands" not in state:
        from cao_hookspecs import CommandSpec

        kernel = get_kernel(ctx)
        root_command = ctx.find_root().command
        builtin = set(BUILTIN_COMMANDS) | set(getattr(root_command, "commands", {}))
        commands: dict[str, CommandSpec] = {}
        for contribution in kernel.hooks.commands():
            spec, owner = contribution.record, kernel.describe_plugin(contribution.plugin_name)
            if not isinstance(spec, CommandSpec):
                click.echo(f"cao: plugin {owner} registered {type(spec).__name__} where a CommandSpec was "
                           f"expected; ignored", err=True)
            elif spec.name in builtin:
                click.echo(f"cao: command {spec.name!r} of plugin {owner} is refused: the name belongs "
                           f"to the built-in command of cao-kernel", err=True)
            else:
                commands[spec.name] = spec
        state["plugin_commands"] = commands
    return state["plugin_commands"]


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
        names |= set(_plugin_commands(ctx))
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in BUILTIN_COMMANDS:
            module, attr, _ = BUILTIN_COMMANDS[cmd_name]
            return getattr(importlib.import_module(module), attr)
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
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
        plugin_commands = _plugin_commands(ctx)
        for name in self.list_commands(ctx):
            if name in BUILTIN_COMMANDS:
                rows.append((name, BUILTIN_COMMANDS[name][2]))
            elif name in plugin_commands:
                rows.append((name, plugin_commands[name].help))
            else:
                command = super().get_command(ctx, name)
                if command is not None:
                    rows.append((name, command.get_short_help_str()))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=CaoGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cao-kernel", prog_name="cao", message="%(prog)s %(version)s")
@click.option("--no-plugins", is_flag=True, help="Load no plugin from entry points (recovery mode).")
@click.pass_context
def cli(ctx: click.Context, no_plugins: bool) -> None:
    """cao: orchestrate CLI coding agents in terminals."""
    from cao_hookspecs.cli import KERNEL_KEY

    state = ctx.ensure_object(dict)
    state["no_plugins"] = no_plugins
    # Plugin commands reach the kernel through cao_hookspecs.cli.kernel_from_context(ctx).
    state[KERNEL_KEY] = lambda: get_kernel(ctx)


def main(argv: list[str] | None = None, prog_name: str = "cao") -> None:
    """The ``cao`` console script (``cao_hookspecs.cli.run_cao`` calls it for plugins' scripts)."""
    cli.main(args=argv, prog_name=prog_name)


def server_main() -> None:
    """The ``cao-server`` script: ``cao server`` (the command comes from the cao-server plugin)."""
    cli.main(args=["server", *sys.argv[1:]], prog_name="cao-server")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
