"""Embed the cao kernel in your own program, with one plugin defined in this file.

The kernel is built with ``load_entrypoints=False``: plugins installed on the machine (entry points in
group ``cao``) are ignored, and only the plugin this program registers takes part. That is how an
application uses cao as a library while choosing exactly which plugins it trusts.

The plugin registers a provider for a made-up agent CLI, ``toy-agent``, and observes status changes.
The program prints what was registered, the command line the provider builds for a terminal, and how
the kernel's status lookup (the ``cao_detect_status`` hook) reads two screens through that provider.

Run it from the repository root with ``uv run python examples/embed_kernel.py``.

Output includes::

    entry-point plugins loaded: none
    registered plugin: toy_plugin (active)
      hooks: cao_after_status_changed, cao_register_providers
    provider toy: binary=toy-agent, exit command=/quit
      launch: toy-agent --model small --cwd ~/projects/toy
      screen 'toy>' reads as: idle (prompt on the last line)
      screen 'thinking...' reads as: processing (thinking banner)
"""

from __future__ import annotations

from cao_hookspecs import (
    LaunchContext,
    LaunchPlan,
    ProviderSpec,
    StatusReport,
    Terminal,
    TerminalStatus,
    hookimpl,
)

from cao_kernel.kernel import Kernel

PROMPT = "toy>"


def _launch(ctx: LaunchContext) -> LaunchPlan:
    return LaunchPlan(argv=("toy-agent", "--model", ctx.model or "default", "--cwd", ctx.working_directory))


def _detect_status(screen: str) -> StatusReport:
    # Detectors must never raise: anything unrecognised is "unknown", with the reason as evidence.
    if "thinking..." in screen:
        return StatusReport(status=TerminalStatus.PROCESSING, evidence="thinking banner")
    lines = screen.splitlines()
    if lines and lines[-1] == PROMPT:
        return StatusReport(status=TerminalStatus.IDLE, evidence="prompt on the last line")
    return StatusReport(status=TerminalStatus.UNKNOWN, evidence="no rule matched")


def _extract_last_message(text: str) -> str:
    answers = [line.removeprefix("answer: ") for line in text.splitlines() if line.startswith("answer: ")]
    if not answers:
        raise ValueError("no answer on the screen")
    return answers[-1]


class ToyPlugin:
    """A provider registration plus an observer. Plugins may be modules, classes or instances."""

    def __init__(self) -> None:
        self.status_changes: list[tuple[str, str, str]] = []

    @hookimpl
    def cao_register_providers(self) -> list[ProviderSpec]:
        return [
            ProviderSpec(
                name="toy",
                binary="toy-agent",
                launch=_launch,
                detect_status=_detect_status,
                extract_last_message=_extract_last_message,
                exit_command="/quit",
                description="A made-up agent CLI used to show the provider hook.",
            )
        ]

    @hookimpl
    def cao_after_status_changed(self, terminal: Terminal, old: StatusReport, new: StatusReport) -> None:
        # Observers must return quickly; this one only records the change.
        self.status_changes.append((terminal.id, old.status, new.status))


def main() -> None:
    kernel = Kernel(load_entrypoints=False)
    kernel.register_plugin(ToyPlugin(), name="toy_plugin")

    from_entry_points = [r.name for r in kernel.plugin_records() if r.entry_point is not None]
    print(f"entry-point plugins loaded: {', '.join(from_entry_points) or 'none'}")
    for record in kernel.plugin_records():
        print(f"registered plugin: {record.name} ({record.status})")
        print(f"  hooks: {', '.join(record.hooks)}")

    for spec in kernel.providers.values():
        print(f"provider {spec.name}: binary={spec.binary}, exit command={spec.exit_command}")

    provider = kernel.provider("toy")
    terminal = Terminal(id="0123abcd", name="toy-1a2b", session_name="cao-demo", provider="toy",
                        agent_profile="developer")
    ctx = LaunchContext(terminal=terminal, profile=None, working_directory="~/projects/toy",
                        runtime_dir="~/projects/toy/.cao-runtime", model="small")
    print(f"  launch: {' '.join(provider.launch(ctx).argv)}")
    # Screens arrive as the detector contract says: one line per row, trailing blanks stripped.
    for screen in (f"welcome to toy-agent\n{PROMPT}", "thinking..."):
        # The kernel asks every detector in turn; its own fallback (trylast) asks the provider.
        report = kernel.hooks.detect_status(terminal, screen, provider)
        last_line = screen.splitlines()[-1]
        print(f"  screen {last_line!r} reads as: {report.status} ({report.evidence})")


if __name__ == "__main__":
    main()
