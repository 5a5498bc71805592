"""Running one example end to end against a real cao-server, the way a person would from a shell."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from typing import Any

from .catalogue import REPO_ROOT, Example
from .follow import ExampleFailed, SessionFollower, connected
from .server import PrivateServer, RunningServer, cao_command

MOCK = "mock_cli"


@dataclasses.dataclass
class Options:
    provider: str = MOCK
    task: str | None = None
    timeout: float | None = None
    settle: float | None = None
    home: str | None = None
    tmux_socket: str | None = None
    workdir: str | None = None
    yolo: bool = False
    timeline: str | None = None
    #: A running server's address: the team runs there (its console shows it) instead of a private one.
    server: str | None = None
    #: Wait for Enter before the team starts and before the server stops (time to open the console).
    watch: bool = False
    #: Variables for the server, and so for every agent it starts (a model API's address, a key...).
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    out: Any = None

    @property
    def offline(self) -> bool:
        return self.provider == MOCK


class Printer:
    """Progress lines with the seconds since the start, on ``out`` (stdout by default)."""

    def __init__(self, out: Any = None) -> None:
        self.out = out or sys.stdout
        self.t0 = time.time()

    def __call__(self, elapsed: float | None, text: str) -> None:
        elapsed = time.time() - self.t0 if elapsed is None else elapsed
        self.out.write(f"{max(0.0, elapsed):6.1f}s  {text}\n")
        self.out.flush()

    def block(self, title: str, text: str) -> None:
        self.out.write(f"\n===== {title} =====\n{text.rstrip()}\n{'=' * (len(title) + 12)}\n")
        self.out.flush()


def run_example(example: Example, options: Options) -> str:
    """Run ``example``; return the supervisor's final answer. Raises ``ExampleFailed`` when it does not
    finish; the server, its agents and its private folders are gone either way."""
    say = Printer(options.out)
    # Mock agents find the examples' behaviour modules (``examples.<name>.behaviours``) from the repository.
    server: PrivateServer | RunningServer
    if options.server:
        server = RunningServer(options.server, home=options.home)
    else:
        server = PrivateServer(home=options.home, tmux_socket=options.tmux_socket,
                               extra_env={"CAO_MOCK_BEHAVIOUR_PATH": str(REPO_ROOT), **options.env})
    timeline: dict[str, Any] = {"example": example.name, "provider": options.provider, "t0": say.t0}
    try:
        server.start()
        if options.server:
            say(None, f"using the cao-server at {server.url}")
        else:
            private = "private " if options.home is None else ""
            say(None, f"cao-server listening on {server.url} ({private}home {server.home}, "
                      f"tmux socket {server.tmux_socket})")
        if server.console:
            say(None, f"web console: {server.console} (works once)")
        _pause(options, "open the console, then press Enter to start the team")
        _install(example, server, say)
        answer = asyncio.run(_follow(example, options, server, say, timeline))
        say.block(f"final answer of {example.supervisor}", answer)
        timeline["final_answer"] = answer
        _pause(options, "press Enter to stop the server")
        return answer
    except ExampleFailed as exc:
        timeline["error"] = str(exc)
        log = server.log().strip()
        raise ExampleFailed(f"{exc}\n--- cao-server log (tail) ---\n{log}" if log else str(exc)) from None
    finally:
        server.stop()
        if isinstance(server, RunningServer):
            say(None, f"the cao-server at {server.url} keeps running")
        else:
            say(None, "stopped the server" + (" and its tmux server" if server.own_tmux else ""))
        if options.timeline:
            with open(options.timeline, "w", encoding="utf-8") as handle:
                json.dump(timeline, handle, indent=2)


def _pause(options: Options, prompt: str) -> None:
    if options.watch and sys.stdin.isatty():
        input(f"        {prompt} ")


def _cao(args: list[str], server: PrivateServer | RunningServer, say: Printer) -> str:
    shown = [os.path.relpath(a, os.getcwd()) if os.path.isabs(a) and a.endswith(".md") else a for a in args]
    say(None, f"$ cao {shlex.join(shown)}")
    done = subprocess.run([*cao_command(), *args], env=server.env(), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300, check=False)
    if done.returncode != 0:
        raise ExampleFailed(f"cao {' '.join(args[:1])} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def _install(example: Example, server: PrivateServer | RunningServer, say: Printer) -> None:
    for profile in example.profiles():
        _cao(["install", str(profile)], server, say)


def _launch(example: Example, options: Options, server: PrivateServer | RunningServer,
            say: Printer) -> tuple[str, str]:
    workdir = options.workdir or os.path.join(server.scratch, "work")
    os.makedirs(workdir, exist_ok=True)
    if isinstance(server, RunningServer) and options.offline:
        # That server's mock agents were not told where the examples are; they also look in their
        # working directory, where a copy of this example's behaviours now is.
        shutil.copytree(example.folder, os.path.join(workdir, "examples", example.folder.name),
                        dirs_exist_ok=True)
    args = ["launch", "--agents", example.supervisor, "--provider", options.provider, "--headless", "--async",
            "--session-name", _short_session(example), "--working-directory", workdir,
            "--auto-approve"]
    if options.yolo:
        args.append("--yolo")
    out = _cao([*args, options.task or example.task], server, say)
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    try:
        return fields["Session created"].strip(), fields["Terminal created"].strip()
    except KeyError:
        raise ExampleFailed(f"cao launch did not say which session it created: {out!r}") from None


def _short_session(example: Example) -> str:
    return f"example-{example.name.replace('_', '-')}"


def session_of(example: Example) -> str:
    """The session an example runs in, as the server names it (it adds its prefix)."""
    from cao_hookspecs.names import SESSION_PREFIX

    return SESSION_PREFIX + _short_session(example)


async def _follow(example: Example, options: Options, server: PrivateServer | RunningServer,
                  say: Printer, timeline: dict[str, Any]) -> str:
    timeout = options.timeout or (120.0 if options.offline else 1800.0)
    # Real agents may sit at their prompt for a moment between two steps; mock agents never do.
    settle = options.settle if options.settle is not None else (1.0 if options.offline else 8.0)
    settings = {k: v for k, v in server.env().items() if k.startswith("CAO_")}
    async with connected(settings) as api:
        follower = SessionFollower(api, session_of(example), t0=say.t0, say=say, settle=settle)
        # Subscribed before the launch: a worker may come and go before the launch command returns.
        await follower.start()
        session = answer = None
        try:
            session, window = await asyncio.to_thread(_launch, example, options, server, say)
            if session != follower.session:
                raise ExampleFailed(f"cao launch created session {session!r}, not {follower.session!r}")
            terminals = await api.list_terminals(session)
            supervisor = next((t for t in terminals if t.name == window), None)
            if supervisor is None:
                raise ExampleFailed(f"no terminal {window!r} in session {session}")
            timeline.update(session=session, supervisor=supervisor.id)
            await follower.run(supervisor.id, timeout)
            answer = await api.get_output(supervisor.id, "last")
        finally:
            await follower.read_timelines()
            # Agents are asked to exit only after a run that finished; a failed one keeps its screens.
            await follower.close(exit_agents=answer is not None)
            timeline.update(follower.timeline())
            if session is not None:
                try:
                    await api.delete_session(session)
                except Exception:  # noqa: BLE001 - the server stop below removes it anyway
                    pass
    return answer
