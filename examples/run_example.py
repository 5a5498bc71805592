"""Run one of cao's examples end to end against a real cao-server, offline by default.

    python examples/run_example.py assign                # mock agents, no network, about 15 s
    python examples/run_example.py handoff
    python examples/run_example.py send_message
    python examples/run_example.py assign --provider claude_code   # the same profiles on a real CLI
    python examples/run_example.py assign --provider claude_code --env ANTHROPIC_BASE_URL=URL  # its model API

It starts ``cao server --port 0`` with a private home folder and a private tmux server, installs the
example's profiles with ``cao install``, launches its supervisor with ``cao launch --headless --async``,
prints a line for every status change and message while the agents work, prints the supervisor's
final answer, then deletes the session and stops the server. Without arguments it lists the examples.

Output includes::

    assign
    handoff
    send_message
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner.catalogue import EXAMPLES  # noqa: E402
from runner.follow import ExampleFailed  # noqa: E402
from runner.run import Options, run_example  # noqa: E402


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run_example.py", description=__doc__.split("\n\n")[0])
    p.add_argument("example", nargs="?", choices=sorted(EXAMPLES), help="the example to run")
    p.add_argument("--provider", default="mock_cli",
                   help="agent CLI for every agent (default: mock_cli, the offline mock agent)")
    p.add_argument("--message", help="the task for the supervisor (default: the example's own)")
    p.add_argument("--timeout", type=float, help="seconds to wait for the end (default: 120 mock, 1800 real)")
    p.add_argument("--settle", type=float,
                   help="seconds of quiet that mean the agents are done (default: 1 mock, 8 real)")
    p.add_argument("--home", help="cao home folder to use (default: a private temporary one)")
    p.add_argument("--tmux-socket", help="tmux socket to use (default: a private one)")
    p.add_argument("--workdir", help="working directory of the agents (default: a temporary folder)")
    p.add_argument("--yolo", action="store_true", help="let real agents use every tool without asking")
    p.add_argument("--timeline", metavar="FILE", help="write every status change and message as JSON")
    p.add_argument("--server", metavar="URL",
                   help="run the team on this running cao-server (e.g. http://127.0.0.1:9889), so its web "
                        "console shows it; only the example's session is removed at the end")
    p.add_argument("--watch", action="store_true",
                   help="wait for Enter before the team starts and before the server stops, to follow it "
                        "in the web console")
    p.add_argument("--env", metavar="NAME=VALUE", action="append", default=[], type=_env_pair,
                   help="set a variable for the server and every agent it starts, e.g. the model API "
                        "an agent CLI calls (repeat for more)")
    return p


def _env_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not name.replace("_", "").isalnum() or name[0].isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with NAME a variable name, got {text!r}")
    return name, value


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.example is None:
        print("Examples (run one with: python examples/run_example.py NAME):")
        for name, example in sorted(EXAMPLES.items()):
            print(f"  {name}")
            print(f"      {example.summary}")
        return 0
    options = Options(provider=args.provider, task=args.message, timeout=args.timeout, settle=args.settle,
                      home=args.home, tmux_socket=args.tmux_socket, workdir=args.workdir, yolo=args.yolo,
                      timeline=args.timeline, env=dict(args.env), server=args.server, watch=args.watch)
    try:
        run_example(EXAMPLES[args.example], options)
    except ExampleFailed as exc:
        print(f"run_example: {args.example} failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("run_example: interrupted; the server and its agents were stopped", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
